import { startEmulator, type RunningEmulator } from '../emulator';
import { SEARCH_RESULT } from './messages';

// Expected numbers follow the documented rule (messages.ts): a token is a whitespace-separated
// word; prompt = 2 + words(system) + Σ(words(message) + 4); output = thinking + reply words.
const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;
const PREFIX = 'Hello from the emulator. You said:';
const KEY = 'sk-ant-emulator';

interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  service_tier: string;
}

interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Array<Record<string, unknown> & { type: string }>;
  stop_reason: string;
  stop_sequence: string | null;
  usage: Usage;
}

interface ErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string };
}

let emulator: RunningEmulator;
let keyed: RunningEmulator;

beforeAll(async () => {
  [emulator, keyed] = await Promise.all([startEmulator({ port: 0 }), startEmulator({ port: 0, apiKey: KEY })]);
});

afterAll(async () => {
  await Promise.all([emulator.close(), keyed.close()]);
});

function post(body: unknown, headers: Record<string, string> = {}, path = '/v1/messages', base = emulator.url): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function message(body: Record<string, unknown>): Promise<Message> {
  const res = await post({ model: 'claude-test', max_tokens: 100, ...body });
  expect(res.status).toBe(200);
  return (await res.json()) as Message;
}

async function failure(res: Response, status: number, type: string): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as ErrorBody;
  expect(body).toEqual({ type: 'error', error: { type, message: expect.any(String) } });
  return body;
}

async function stream(body: Record<string, unknown>, headers?: Record<string, string>): Promise<SseEvent[]> {
  const res = await post({ model: 'claude-test', max_tokens: 100, ...body, stream: true }, headers);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      expect(eventLine.startsWith('event: ')).toBe(true);
      expect(dataLine.startsWith('data: ')).toBe(true);
      const event = { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) as SseEvent['data'] };
      expect(event.data.type).toBe(event.event);
      return event;
    });
}

const weatherTool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { location: { type: 'string' } } } };
const timeTool = { name: 'get_time', input_schema: { type: 'object', properties: {} } };

describe('POST /v1/messages', () => {
  it('answers the Anthropic message shape with the deterministic reply and word-count usage', async () => {
    const res = await post({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Hi there' },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
        { role: 'user', content: [{ type: 'text', text: 'What is the   capital' }, { type: 'text', text: 'of France?' }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as Message;
    const reply = `${PREFIX} What is the capital of France?`;
    const prompt = 2 + countWords('You are terse.') + (2 + 4) + (1 + 4) + (countWords('What is the capital of France?') + 4);
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_[A-Za-z0-9]{24}$/),
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: reply }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: prompt,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: countWords(reply),
        service_tier: 'standard',
      },
    });
  });

  it('truncates to max_tokens words with stop_reason max_tokens', async () => {
    const body = await message({ max_tokens: 4, messages: [{ role: 'user', content: 'anything at all' }] });
    expect(body.content).toEqual([{ type: 'text', text: 'Hello from the emulator.' }]);
    expect(body).toMatchObject({ stop_reason: 'max_tokens', stop_sequence: null, usage: { output_tokens: 4 } });
  });

  it('stops before the earliest stop sequence', async () => {
    const body = await message({ stop_sequences: ['France', 'said'], messages: [{ role: 'user', content: 'Paris is in France' }] });
    expect(body.content).toEqual([{ type: 'text', text: 'Hello from the emulator. You' }]);
    expect(body).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'said', usage: { output_tokens: 5 } });
  });

  it('calls the first tool when the last user text mentions the weather', async () => {
    const body = await message({ tools: [weatherTool, timeTool], messages: [{ role: 'user', content: 'What is the Weather like?' }] });
    expect(body.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: { location: 'Paris' } }]);
    expect(body).toMatchObject({ stop_reason: 'tool_use', usage: { output_tokens: 1 } });
  });

  it.each([
    ['none', { type: 'none' }, 'weather?', undefined],
    ['any', { type: 'any' }, 'hello', 'get_weather'],
    ['a named tool', { type: 'tool', name: 'get_time' }, 'weather', 'get_time'],
    ['auto without the word', { type: 'auto' }, 'weathering', undefined],
  ])('tool_choice %s', async (_label, toolChoice, text, tool) => {
    const body = await message({ tools: [weatherTool, timeTool], tool_choice: toolChoice, messages: [{ role: 'user', content: text }] });
    if (tool === undefined) expect(body.content[0].type).toBe('text');
    else expect(body.content[0]).toMatchObject({ type: 'tool_use', name: tool });
  });

  it('answers tool results with "Tool said: <content>"', async () => {
    const body = await message({
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18 degrees' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '22  degrees' }] },
          ],
        },
      ],
    });
    expect(body.content).toEqual([{ type: 'text', text: 'Tool said: 18 degrees 22 degrees' }]);
    expect(body.stop_reason).toBe('end_turn');
  });

  it('puts a thinking block first when thinking is enabled and counts it as output', async () => {
    const body = await message({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Hi' }] });
    expect(body.content).toEqual([
      { type: 'thinking', thinking: 'Considering the request.', signature: 'emulated' },
      { type: 'text', text: `${PREFIX} Hi` },
    ]);
    expect(body.usage.output_tokens).toBe(3 + 7);
  });

  it('reports the words up to the last cache_control block as a cache write (1h when that block says so)', async () => {
    const body = await message({
      tools: [{ ...timeTool, cache_control: { type: 'ephemeral' } }],
      system: [{ type: 'text', text: 'One two three.' }, { type: 'text', text: 'Four five.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'six seven', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        { role: 'assistant', content: 'eight' },
        { role: 'user', content: 'nine ten eleven' },
      ],
    });
    const total = 2 + 5 + (2 + 4) + (1 + 4) + (3 + 4);
    expect(body.usage).toMatchObject({
      input_tokens: total - 7,
      cache_creation_input_tokens: 7,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 7 },
    });
  });

  it.each([
    ['max_tokens missing', { max_tokens: undefined }, /max_tokens: Field required/],
    ['max_tokens 0', { max_tokens: 0 }, /max_tokens/],
    ['no messages', { messages: [] }, /messages/],
    ['a system role', { messages: [{ role: 'system', content: 'x' }] }, /role/],
    ['a blank text block', { messages: [{ role: 'user', content: [{ type: 'text', text: '  ' }] }] }, /non-whitespace/],
    ['an empty message', { messages: [{ role: 'user', content: [] }, { role: 'assistant', content: 'x' }] }, /non-empty content/],
    ['temperature above 1', { temperature: 1.5 }, /temperature/],
    ['a thinking budget below 1024', { thinking: { type: 'enabled', budget_tokens: 1000 } }, /budget_tokens/],
    ['a thinking budget not below max_tokens', { max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 } }, /max_tokens/],
    ['thinking with temperature', { max_tokens: 2000, temperature: 0.5, thinking: { type: 'enabled', budget_tokens: 1024 } }, /temperature/],
    [
      'thinking with a forced tool',
      { max_tokens: 2000, tools: [weatherTool], tool_choice: { type: 'any' }, thinking: { type: 'enabled', budget_tokens: 1024 } },
      /forces tool use/,
    ],
    ['a tool_choice naming an unknown tool', { tools: [weatherTool], tool_choice: { type: 'tool', name: 'nope' } }, /not found/],
    [
      'a tool_use without its tool_result',
      { messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] }, { role: 'user', content: 'y' }] },
      /without `tool_result`/,
    ],
    [
      'a tool_result without its tool_use',
      { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't9', content: 'z' }] }] },
      /unexpected `tool_use_id`/,
    ],
    [
      'text before a tool_result',
      {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'text', text: 'y' }, { type: 'tool_result', tool_use_id: 't1', content: 'z' }] },
        ],
      },
      /must come first/,
    ],
    ['a base64 document that is not a PDF', { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: btoa('plain words') } }] }] }, /^The PDF specified was not valid\.$/],
    ['a base64 document of another media type', { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: btoa('x') } }] }] }, /^messages\.0\.content\.0\.document\.source\.base64\.media_type: Input should be 'application\/pdf'$/],
    ['a base64 document that is not base64', { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: '%%%' } }] }] }, /document\.source\.base64\.data: Invalid base64 data/],
    ['a text document of another media type', { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/markdown', data: '# x' } }] }] }, /document\.source\.text\.media_type: Input should be 'text\/plain'/],
  ])('answers 400 invalid_request_error for %s', async (_label, fields, message) => {
    const body = { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...fields };
    const error = await failure(await post(body), 400, 'invalid_request_error');
    expect(error.error.message).toMatch(message);
  });
});

describe('POST /v1/messages with stream: true', () => {
  it('sends the exact Anthropic event sequence, one text_delta per word', async () => {
    const events = await stream({ messages: [{ role: 'user', content: 'Hi  you' }] });
    const words = `${PREFIX} Hi you`.split(' ');
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      ...words.map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const start = events[0].data as unknown as { message: Message };
    expect(start.message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 2 + 2 + 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 1,
        service_tier: 'standard',
      },
    });
    expect(events[1].data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data);
    expect(deltas[0]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } });
    expect(deltas.map((d) => (d.delta as { text: string }).text).join('')).toBe(words.join(' '));
    expect(events[events.length - 2].data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: words.length },
    });
    expect(events[events.length - 1].data).toEqual({ type: 'message_stop' });
  });

  it('streams thinking then a tool_use block with input_json_delta pieces', async () => {
    const events = await stream({
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }],
    });
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[1].data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
    expect(events[3].data.delta).toEqual({ type: 'thinking_delta', thinking: 'Considering the request.' });
    expect(events[4].data.delta).toEqual({ type: 'signature_delta', signature: 'emulated' });
    expect(events[6].data).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: {} } });
    const json = events.slice(7, 10).map((e) => (e.data.delta as { partial_json: string }).partial_json);
    expect(json[0]).toBe('');
    expect(JSON.parse(json.join(''))).toEqual({ location: 'Paris' });
    expect(events[11].data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 + 1 } });
  });

  it('honours x-emulator-chunk-delay-ms between events', async () => {
    const started = Date.now();
    const events = await stream({ messages: [{ role: 'user', content: 'Hi' }] }, { 'x-emulator-chunk-delay-ms': '15' });
    expect(Date.now() - started).toBeGreaterThanOrEqual((events.length - 1) * 15 - 5);
  });
});

describe('web search (server tool)', () => {
  const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 5 };
  const citation = { type: 'web_search_result_location', url: SEARCH_RESULT.url, title: SEARCH_RESULT.title, cited_text: SEARCH_RESULT.citedText, encrypted_index: 'emulated' };

  it('answers a server_tool_use block, its web_search_tool_result and the reply split into an uncited and a cited text block', async () => {
    const body = await message({ messages: [{ role: 'user', content: 'Paris population' }], tools: [weatherTool, webSearch] });
    const id = body.content[0].id as string;
    expect(body.content).toEqual([
      { type: 'server_tool_use', id: expect.stringMatching(/^srvtoolu_[A-Za-z0-9]{24}$/), name: 'web_search', input: { query: 'Paris population' } },
      {
        type: 'web_search_tool_result',
        tool_use_id: id,
        content: [{ type: 'web_search_result', url: SEARCH_RESULT.url, title: SEARCH_RESULT.title, encrypted_content: 'emulated', page_age: null }],
      },
      { type: 'text', text: 'Hello from the emulator. ' },
      { type: 'text', text: 'You said: Paris population', citations: [citation] },
    ]);
    expect(body.stop_reason).toBe('end_turn');
    expect(body.usage.output_tokens).toBe(countWords(`${PREFIX} Paris population`));
    expect((body.usage as Usage & { server_tool_use?: unknown }).server_tool_use).toEqual({ web_search_requests: 1 });
  });

  it('does not search without the tool or with tool_choice none, keeps a short reply in one uncited block, and rejects a bad max_uses', async () => {
    const plain = await message({ messages: [{ role: 'user', content: 'Paris' }] });
    expect(plain.content.map((block) => block.type)).toEqual(['text']);
    expect(plain.usage).not.toHaveProperty('server_tool_use');
    const none = await message({ messages: [{ role: 'user', content: 'Paris' }], tools: [webSearch], tool_choice: { type: 'none' } });
    expect(none.content.map((block) => block.type)).toEqual(['text']);
    const short = await message({ max_tokens: 3, messages: [{ role: 'user', content: 'Paris' }], tools: [webSearch] });
    expect(short.content).toEqual([expect.objectContaining({ type: 'server_tool_use' }), expect.objectContaining({ type: 'web_search_tool_result' }), { type: 'text', text: 'Hello from the' }]);
    await failure(await post({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [{ ...webSearch, max_uses: 0 }] }), 400, 'invalid_request_error');
  });

  it('streams the server tool blocks, then the cited block with a citations_delta before its text', async () => {
    const events = await stream({ messages: [{ role: 'user', content: 'Paris population' }], tools: [webSearch] });
    const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block as Record<string, unknown>);
    expect(starts.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text', 'text']);
    expect(starts[0]).toEqual({ type: 'server_tool_use', id: expect.any(String), name: 'web_search', input: {} });
    expect(starts[3]).toEqual({ type: 'text', text: '', citations: [] });
    const deltasOf = (index: number) => events.filter((e) => e.event === 'content_block_delta' && e.data.index === index).map((e) => e.data.delta as Record<string, string>);
    expect(JSON.parse(deltasOf(0).map((d) => d.partial_json).join(''))).toEqual({ query: 'Paris population' });
    expect(deltasOf(1)).toEqual([]);
    expect(deltasOf(2).map((d) => d.text).join('')).toBe('Hello from the emulator. ');
    expect(deltasOf(3)[0]).toEqual({ type: 'citations_delta', citation });
    expect(deltasOf(3).slice(1).map((d) => d.text).join('')).toBe('You said: Paris population');
    expect((events.find((e) => e.event === 'message_delta')!.data.usage as Record<string, unknown>).server_tool_use).toEqual({ web_search_requests: 1 });
  });
});

describe('Anthropic errors, auth and routing', () => {
  it.each([
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [529, 'overloaded_error'],
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
  ])('x-emulator-status %d answers %s in the Anthropic error shape', async (status, type) => {
    const res = await post({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-emulator-status': String(status) });
    await failure(res, status, type);
    expect(res.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
  });

  it('reads the key from x-api-key (not Authorization) when the emulator has one', async () => {
    const body = { model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };
    expect((await failure(await post(body, {}, '/v1/messages', keyed.url), 401, 'authentication_error')).error.message).toMatch(/x-api-key/);
    await failure(await post(body, { authorization: `Bearer ${KEY}` }, '/v1/messages', keyed.url), 401, 'authentication_error');
    await failure(await post(body, { 'x-api-key': 'wrong' }, '/v1/messages', keyed.url), 401, 'authentication_error');
    expect((await post(body, { 'x-api-key': KEY }, '/v1/messages', keyed.url)).status).toBe(200);
  });

  it('answers malformed JSON and unknown /v1/messages paths in the Anthropic shape; other paths stay OpenAI', async () => {
    await failure(await post('{not json'), 400, 'invalid_request_error');
    await failure(await post({}, {}, '/v1/messages/batches'), 404, 'not_found_error');
    const openai = await post({}, {}, '/v1/nothing-here');
    expect(openai.status).toBe(404);
    expect(await openai.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it('counts tokens at /v1/messages/count_tokens without max_tokens', async () => {
    const res = await post({ model: 'claude-test', system: 'Be brief.', messages: [{ role: 'user', content: 'one two three' }] }, {}, '/v1/messages/count_tokens');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ input_tokens: 2 + 2 + 3 + 4 });
  });
});

describe('POST /v1/messages with documents', () => {
  it('takes a base64 PDF and a plain-text document, and records them as they arrived', async () => {
    const pdf = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
    const content = [
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'a.pdf', cache_control: { type: 'ephemeral' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Some notes' } },
      { type: 'text', text: 'Summarise' },
    ];
    const answer = await message({ messages: [{ role: 'user', content }] });
    expect(answer.content).toEqual([{ type: 'text', text: `${PREFIX} Summarise` }]);
    expect((emulator.requests.at(-1)!.body as { messages: unknown[] }).messages).toEqual([{ role: 'user', content }]);
  });
});
