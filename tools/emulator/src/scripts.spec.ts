import { startEmulator, type RunningEmulator } from './emulator';

const WRITE = { name: 'write_file', arguments: { path: 'notes/hello.txt', content: 'Hello, agent!\nSecond line.' } };
const FINAL = 'The file is written.';

interface ChatToolCallDelta {
  index: number;
  type?: string;
  function: { name?: string; arguments: string };
}
interface ChatChoice {
  finish_reason: string | null;
  message: { content: string | null; tool_calls?: unknown[] };
  delta?: { content?: string; tool_calls?: ChatToolCallDelta[] };
}
interface ChatBody {
  choices: ChatChoice[];
}
interface AnthropicEvent {
  type: string;
  content_block?: { type: string; id: string; name: string; input: unknown };
  delta?: { type?: string; partial_json?: string; stop_reason?: string };
}
interface GeminiBody {
  candidates: Array<{ content: { parts: Array<{ text?: string; functionCall?: unknown }> } }>;
}

const post = async (path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown>; text: string }> => {
  const response = await fetch(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // An event stream: the caller reads `text`.
  }
  return { status: response.status, json, text };
};

/** The `data:` payloads of an event stream, `[DONE]` left out. */
const events = <T>(text: string): T[] =>
  [...text.matchAll(/^data: (.*)$/gm)].map((match) => match[1]).filter((data) => data !== '[DONE]').map((data) => JSON.parse(data) as T);
const choiceOf = (json: unknown): ChatChoice => (json as ChatBody).choices[0];

const openAITools = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
  { type: 'function', function: { name: WRITE.name, parameters: { type: 'object' } } },
];
const anthropicTools = [
  { name: 'get_weather', input_schema: { type: 'object' } },
  { name: WRITE.name, input_schema: { type: 'object' } },
];
const geminiTools = [{ functionDeclarations: [{ name: 'get_weather' }, { name: WRITE.name }] }];

let emulator: RunningEmulator;

beforeEach(async () => {
  emulator = await startEmulator();
});

afterEach(async () => {
  await emulator.close();
});

describe('scripted turns (emulator.script)', () => {
  it('answers OpenAI chat requests for the model with the scripted tool call, then the text, then by the rules again', async () => {
    emulator.script('agent-model', [{ toolCall: WRITE }, { text: FINAL }]);
    const messages = [{ role: 'user', content: 'Write the file please' }];

    const call = await post('/v1/chat/completions', { model: 'agent-model', messages, tools: openAITools });
    expect(call.status).toBe(200);
    const choice = choiceOf(call.json);
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: WRITE.name, arguments: JSON.stringify(WRITE.arguments) } }]);

    // Another model is not scripted: it answers by the rules meanwhile.
    const other = await post('/v1/chat/completions', { model: 'other-model', messages, tools: openAITools });
    expect(choiceOf(other.json).message.content).toBe('Hello from the emulator. You said: Write the file please');

    // Control suffixes are not part of the name the script is kept under.
    const streamed = await post('/v1/chat/completions', { model: 'agent-model@chunk-delay=1', messages, stream: true });
    const chunks = events<ChatBody>(streamed.text);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(FINAL);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');

    const after = await post('/v1/chat/completions', { model: 'agent-model', messages });
    expect(choiceOf(after.json).message.content).toBe('Hello from the emulator. You said: Write the file please');
  });

  it('streams a scripted OpenAI tool call as argument fragments that join to the scripted arguments', async () => {
    emulator.script('agent-model', [{ toolCall: WRITE }]);
    const streamed = await post('/v1/chat/completions', { model: 'agent-model', messages: [{ role: 'user', content: 'go' }], tools: openAITools, stream: true });
    const calls = events<ChatBody>(streamed.text).flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: WRITE.name } });
    expect(calls.length).toBeGreaterThan(2);
    expect(JSON.parse(calls.map((call) => call.function.arguments).join(''))).toEqual(WRITE.arguments);
  });

  it('answers Anthropic Messages with a scripted tool_use block (streamed input_json deltas), then the scripted text', async () => {
    emulator.script('claude-agent', [{ toolCall: WRITE }, { text: FINAL }]);
    const base = { model: 'claude-agent', max_tokens: 1000, tools: anthropicTools };

    const streamed = await post('/v1/messages', { ...base, stream: true, messages: [{ role: 'user', content: 'go' }] });
    const all = events<AnthropicEvent>(streamed.text);
    const start = all.find((event) => event.type === 'content_block_start');
    expect(start!.content_block).toMatchObject({ type: 'tool_use', name: WRITE.name, input: {} });
    const json = all.filter((event) => event.delta?.type === 'input_json_delta').map((event) => event.delta!.partial_json!).join('');
    expect(JSON.parse(json)).toEqual(WRITE.arguments);
    expect(all.find((event) => event.type === 'message_delta')!.delta!.stop_reason).toBe('tool_use');

    const id = start!.content_block!.id;
    const answer = await post('/v1/messages', {
      ...base,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id, name: WRITE.name, input: WRITE.arguments }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'written' }] },
      ],
    });
    expect(answer.json).toMatchObject({ content: [{ type: 'text', text: FINAL }], stop_reason: 'end_turn' });
  });

  it('answers Gemini generateContent with a scripted functionCall, then the scripted text (streamed)', async () => {
    emulator.script('gemini-agent', [{ toolCall: WRITE }, { text: FINAL }]);
    const body = { contents: [{ role: 'user', parts: [{ text: 'go' }] }], tools: geminiTools };
    const call = await post('/v1beta/models/gemini-agent:generateContent', body);
    expect((call.json as unknown as GeminiBody).candidates[0].content.parts).toEqual([{ functionCall: { name: WRITE.name, args: WRITE.arguments } }]);

    const streamed = await post('/v1beta/models/gemini-agent:streamGenerateContent?alt=sse', body);
    expect(
      events<GeminiBody>(streamed.text)
        .map((event) => event.candidates[0].content.parts[0].text)
        .join(''),
    ).toBe(FINAL);
  });

  it('cuts a scripted text at max_tokens like any other', async () => {
    emulator.script('agent-model', [{ text: FINAL }]);
    const answer = await post('/v1/chat/completions', { model: 'agent-model', max_tokens: 2, messages: [{ role: 'user', content: 'go' }] });
    expect(choiceOf(answer.json)).toMatchObject({ message: { content: 'The file' }, finish_reason: 'length' });
  });

  it.each([
    ['OpenAI', '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'go' }], tools: openAITools.slice(0, 1) }],
    ['Anthropic', '/v1/messages', { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: anthropicTools.slice(0, 1) }],
    ['Gemini', '/v1beta/models/m:generateContent', { contents: [{ role: 'user', parts: [{ text: 'go' }] }] }],
  ])('refuses (400) on %s a scripted call of a tool the request does not declare, so a dropped tool shows', async (_format, path, body) => {
    emulator.script('m', [{ toolCall: WRITE }]);
    const refused = await post(path, body);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(`The scripted call of '${WRITE.name}'`);
  });
});
