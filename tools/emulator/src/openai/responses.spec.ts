import { startEmulator, type RunningEmulator } from '../emulator';

// Reads of nested fields the tests assert, without a schema of their own.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = Record<string, any>;

/** The emulator's Responses API, as OpenAI's and Azure's v1 API answer it. */
describe('emulator: POST /v1/responses', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKey: 'sk-test' });
  });
  afterAll(() => emulator.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer sk-test' }) =>
    fetch(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('answers a message with usage, cached tokens under a prompt_cache_key and reasoning tokens', async () => {
    const answer = await post('/v1/responses', {
      model: 'gpt-test',
      instructions: 'Be brief.',
      input: 'Count these words',
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
    });
    expect(answer.status).toBe(200);
    const response = (await answer.json()) as Answer;
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-test' });
    expect(response.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[0]).toMatchObject({ summary: [{ type: 'summary_text', text: 'Considering the request.' }], encrypted_content: 'emulated' });
    expect(response.output[1].content[0].text).toBe('Hello from the emulator. You said: Count these words');
    // 2 + 2 (instructions) + 3 + 4 = 11 in; 3 reasoning + 9 reply words out.
    expect(response.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 5 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 23 });
  });

  it('calls a namespaced function for the weather, and answers its output', async () => {
    const tools = [{ type: 'namespace', name: 'fs', tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }] }];
    const first = (await (await post('/v1/responses', { model: 'm', input: 'weather in Paris?', tools })).json()) as Answer;
    expect(first.output[0]).toMatchObject({ type: 'function_call', name: 'weather', namespace: 'fs', arguments: '{"location":"Paris"}' });
    const input = [{ role: 'user', content: 'weather in Paris?' }, first.output[0], { type: 'function_call_output', call_id: first.output[0].call_id, output: 'Sunny' }];
    const second = (await (await post('/v1/responses', { model: 'm', input, tools })).json()) as Answer;
    expect(second.output[0].content[0].text).toBe('Tool said: Sunny');
  });

  it('streams typed events in order, with sequence numbers, ending with response.completed (and on Azure v1)', async () => {
    for (const [path, headers] of [
      ['/v1/responses', { authorization: 'Bearer sk-test' }],
      ['/openai/v1/responses', { 'api-key': 'sk-test' }],
    ] as const) {
      const answer = await post(path, { model: 'dep', input: 'hi there', tools: [{ type: 'web_search' }], stream: true }, headers);
      const events = (await answer.text())
        .split('\n\n')
        .filter(Boolean)
        .map((block) => JSON.parse(block.split('\n')[1].slice(6)) as Answer);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      const types = events.map((event) => event.type);
      expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
      expect(types).toContain('response.web_search_call.completed');
      expect(types.filter((type) => type === 'response.output_text.delta').length).toBe(8);
      expect(types.at(-1)).toBe('response.completed');
      expect(events.at(-1)!.response.output.map((item: { type: string }) => item.type)).toEqual(['web_search_call', 'message']);
      expect(events.at(-1)!.response.usage.output_tokens).toBe(8);
    }
  });

  it('cuts at max_output_tokens as an incomplete response, and refuses what OpenAI refuses', async () => {
    const cut = (await (await post('/v1/responses', { model: 'm', input: 'one two three', max_output_tokens: 2 })).json()) as Answer;
    expect([cut.status, cut.incomplete_details, cut.output[0].content[0].text]).toEqual(['incomplete', { reason: 'max_output_tokens' }, 'Hello from']);
    expect((await post('/v1/responses', { model: 'm', input: [] })).status).toBe(400);
    expect((await post('/v1/responses', { model: 'm', input: 'x', previous_response_id: 'resp_1' })).status).toBe(400);
    const file = (part: Record<string, unknown>) => post('/v1/responses', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', ...part }, { type: 'input_text', text: 'Summarise' }] }] });
    expect((await file({ file_data: `data:application/pdf;base64,${btoa('%PDF-1.4\n%%EOF\n')}`, filename: 'a.pdf' })).status).toBe(200);
    const notPdf = await file({ file_data: `data:application/pdf;base64,${btoa('plain words')}` });
    expect([notPdf.status, ((await notPdf.json()) as Answer).error.message]).toEqual([400, expect.stringContaining("'input[0].content[0].file_data'")]);
  });
  describe('scripted turns (emulator.script)', () => {
    // Codex's shell function and one of its namespaced tools, as Codex declares them.
    const tools = [
      { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
      { type: 'namespace', name: 'mcp', tools: [{ type: 'function', name: 'read_page', parameters: { type: 'object' } }] },
      { type: 'web_search' },
    ];
    const events = async (answer: Response) =>
      (await answer.text())
        .split('\n\n')
        .filter(Boolean)
        .map((block) => JSON.parse(block.split('\n')[1].slice(6)) as Answer);

    it('answers the scripted function call, then the scripted text after its output, then by the rules again', async () => {
      emulator.script('codex-model', [{ toolCall: { name: 'exec_command', arguments: { cmd: "printf 'hi' > a.txt" } } }, { text: 'Created a.txt.' }]);
      const first = (await (await post('/v1/responses', { model: 'codex-model', input: 'Create a.txt', tools })).json()) as Answer;
      expect(first.output).toEqual([
        { id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', name: 'exec_command', arguments: JSON.stringify({ cmd: "printf 'hi' > a.txt" }), call_id: expect.stringMatching(/^call_/) },
      ]);
      // 1 + the arguments' four words.
      expect(first.usage.output_tokens).toBe(5);
      const input = ['Create a.txt', first.output[0], { type: 'function_call_output', call_id: first.output[0].call_id, output: 'exit 0' }].map((item) =>
        typeof item === 'string' ? { role: 'user', content: item } : item,
      );
      const second = (await (await post('/v1/responses', { model: 'codex-model', input, tools })).json()) as Answer;
      // No search either: a scripted text is the whole answer.
      expect(second.output).toEqual([{ id: expect.stringMatching(/^msg_/), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Created a.txt.', annotations: [], logprobs: [] }] }]);
      const third = (await (await post('/v1/responses', { model: 'codex-model', input, tools })).json()) as Answer;
      expect(third.output.at(-1).content[0].text).toBe('Tool said: exit 0');
    });

    it('streams a scripted call of a namespaced function (by either name) and a scripted text, reasoning first', async () => {
      emulator.script('codex-model', [
        { toolCall: { name: 'mcp__read_page', arguments: { url: 'https://example.test/' } } },
        { toolCall: { name: 'read_page', arguments: { url: 'https://example.test/2' } } },
        { text: 'All read, thank you.' },
      ]);
      for (const url of ['https://example.test/', 'https://example.test/2']) {
        const streamed = await events(await post('/v1/responses', { model: 'codex-model', input: 'Read it', tools, reasoning: { effort: 'low' }, stream: true }));
        expect(streamed.map((event) => event.sequence_number)).toEqual(streamed.map((_, index) => index));
        const done = streamed.at(-1)!;
        expect(done.type).toBe('response.completed');
        expect(done.response.output.map((item: Answer) => item.type)).toEqual(['reasoning', 'function_call']);
        expect(done.response.output[1]).toMatchObject({ name: 'read_page', namespace: 'mcp', arguments: JSON.stringify({ url }) });
        const deltas = streamed.filter((event) => event.type === 'response.function_call_arguments.delta').map((event) => event.delta as string);
        expect(deltas.join('')).toBe(JSON.stringify({ url }));
      }
      const text = await events(await post('/v1/responses', { model: 'codex-model', input: 'Done?', tools, max_output_tokens: 3, stream: true }));
      expect(text.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta as string).join('')).toBe('All read, thank');
      expect(text.at(-1)).toMatchObject({ type: 'response.incomplete', response: { incomplete_details: { reason: 'max_output_tokens' } } });
    });

    it('refuses a scripted call of a function the request does not declare, with a 400 naming it', async () => {
      emulator.script('codex-model', [{ toolCall: { name: 'apply_patch', arguments: {} } }]);
      const answer = await post('/v1/responses', { model: 'codex-model', input: 'Patch it', tools });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as Answer).error.message).toBe("The scripted call of 'apply_patch' names no function tool of this request.");
      // The turn was spent on the refusal: the next request is answered by the rules.
      const next = (await (await post('/v1/responses', { model: 'codex-model', input: 'Patch it', tools })).json()) as Answer;
      expect(next.output.at(-1).content[0].text).toBe('Hello from the emulator. You said: Patch it');
    });
  });
});
