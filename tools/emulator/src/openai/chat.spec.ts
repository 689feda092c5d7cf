import { startEmulator, type RunningEmulator } from '../emulator';
import { emulatedAudio } from './audio';

// Behaviours of POST /v1/chat/completions documented in chat.ts: tools, logprobs,
// refusal, search annotations, content filter, stop sequences, cached tokens.
const PREFIX = 'Hello from the emulator. You said:';
const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;

interface ToolCall {
  id: string;
  type: string;
  function?: { name: string; arguments: string };
  custom?: { name: string; input: string };
}

interface LogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

interface Logprobs {
  content: LogprobEntry[] | null;
  refusal: LogprobEntry[] | null;
}

interface ChatResponse {
  model: string;
  choices: {
    index: number;
    message: {
      role: string;
      content: string | null;
      refusal: string | null;
      annotations: unknown[];
      tool_calls?: ToolCall[];
    };
    logprobs: Logprobs | null;
    finish_reason: string;
  }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  };
}

interface ToolCallDelta {
  index: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments: string };
  custom?: { name?: string; input: string };
}

interface Chunk {
  choices: {
    index: number;
    delta: { role?: string; content?: string | null; refusal?: string | null; tool_calls?: ToolCallDelta[] };
    logprobs: Logprobs | null;
    finish_reason: string | null;
  }[];
}

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

function post(body: unknown): Promise<Response> {
  return fetch(`${emulator.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function chat(body: Record<string, unknown>): Promise<ChatResponse> {
  const res = await post({ model: 'gpt-4o-mini', ...body });
  expect(res.status).toBe(200);
  return (await res.json()) as ChatResponse;
}

async function stream(body: Record<string, unknown>): Promise<Chunk[]> {
  const res = await post({ model: 'gpt-4o-mini', ...body, stream: true });
  expect(res.status).toBe(200);
  const events = (await res.text()).split('\n\n').filter((event) => event !== '');
  expect(events[events.length - 1]).toBe('data: [DONE]');
  return events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)) as Chunk);
}

const user = (content: unknown): { role: string; content: unknown }[] => [{ role: 'user', content }];
const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } };
const timeTool = { type: 'function', function: { name: 'get_time' } };
const grammarTool = { type: 'custom', custom: { name: 'city_grammar', description: 'A city name' } };

describe('tool calls', () => {
  it('calls the first function tool when the last user text mentions the weather', async () => {
    const body = await chat({ messages: user('What is the WEATHER in Paris?'), tools: [grammarTool, weatherTool, timeTool] });
    const choice = body.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
    ]);
    expect(JSON.parse(choice.message.tool_calls![0].function!.arguments)).toEqual({ location: 'Paris' });
    // 1 for the name + 1 word of arguments.
    expect(body.usage.completion_tokens).toBe(2);
  });

  it('answers in text when there are no tools, no "weather" word, or tool_choice is "none"', async () => {
    const noTools = await chat({ messages: user('weather please') });
    expect(noTools.choices[0].message.content).toBe(`${PREFIX} weather please`);
    const otherWord = await chat({ messages: user('weatherproof jacket'), tools: [weatherTool] });
    expect(otherWord.choices[0].finish_reason).toBe('stop');
    const none = await chat({ messages: user('weather please'), tools: [weatherTool], tool_choice: 'none' });
    expect(none.choices[0].message.content).toBe(`${PREFIX} weather please`);
    expect(none.choices[0].message).not.toHaveProperty('tool_calls');
    const onlyCustom = await chat({ messages: user('weather please'), tools: [grammarTool] });
    expect(onlyCustom.choices[0].finish_reason).toBe('stop');
  });

  it('forces the named function whatever the text, and "required" calls the first tool', async () => {
    const forced = await chat({
      messages: user('tell me a joke'),
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    expect(forced.choices[0].finish_reason).toBe('tool_calls');
    expect(forced.choices[0].message.tool_calls![0].function).toEqual({ name: 'get_time', arguments: '{"location":"Paris"}' });

    const required = await chat({ messages: user('tell me a joke'), tools: [timeTool, weatherTool], tool_choice: 'required' });
    expect(required.choices[0].message.tool_calls![0].function!.name).toBe('get_time');
  });

  it('calls a forced custom tool with input "Paris"', async () => {
    const body = await chat({
      messages: user('anything'),
      tools: [weatherTool, grammarTool],
      tool_choice: { type: 'custom', custom: { name: 'city_grammar' } },
    });
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[0].message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), type: 'custom', custom: { name: 'city_grammar', input: 'Paris' } },
    ]);
  });

  it('gives each of n choices its own call id', async () => {
    const body = await chat({ messages: user('weather?'), tools: [weatherTool], n: 2 });
    const [a, b] = body.choices.map((choice) => choice.message.tool_calls![0].id);
    expect(a).not.toBe(b);
    expect(body.usage.completion_tokens).toBe(4);
  });

  it('replies "Tool said: <content>" to a tool result, and records extra_content untouched', async () => {
    const extra = { google: { thought_signature: 'opaque-123' } };
    const messages = [
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' }, extra_content: extra }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny,   21 C' },
    ];
    const body = await chat({ messages, tools: [weatherTool] });
    expect(body.choices[0].message.content).toBe('Tool said: sunny, 21 C');
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage.completion_tokens).toBe(5);
    const recorded = emulator.requests[emulator.requests.length - 1].body as { messages: typeof messages };
    expect(recorded.messages[1].tool_calls![0].extra_content).toEqual(extra);

    const parts = await chat({ messages: [...messages.slice(0, 2), { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'cloudy' }] }] });
    expect(parts.choices[0].message.content).toBe('Tool said: cloudy');
  });

  it('streams a function call as OpenAI does: head chunk, argument fragments, finish "tool_calls"', async () => {
    const chunks = await stream({ messages: user('weather please'), tools: [weatherTool] });
    const head = chunks[0].choices[0];
    expect(head.delta).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), type: 'function', function: { name: 'get_weather', arguments: '' } }],
      refusal: null,
    });
    expect(head.finish_reason).toBeNull();
    const fragments = chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta.tool_calls![0]);
    expect(fragments[0]).toEqual({ index: 0, function: { arguments: '{"loc' } });
    expect(fragments.length).toBeGreaterThan(1);
    expect(fragments.map((fragment) => fragment.function!.arguments).join('')).toBe('{"location":"Paris"}');
    expect(fragments.every((fragment) => fragment.id === undefined && fragment.index === 0)).toBe(true);
    const finish = chunks[chunks.length - 1].choices[0];
    expect(finish.delta).toEqual({});
    expect(finish.finish_reason).toBe('tool_calls');
  });

  it('takes a file part as a PDF data URL or a file_id', async () => {
    const pdf = `data:application/pdf;base64,${btoa('%PDF-1.4\n%%EOF\n')}`;
    for (const file of [{ file_data: pdf, filename: 'a.pdf' }, { file_id: 'file-abc' }]) {
      const body = await chat({ messages: user([{ type: 'file', file }, { type: 'text', text: 'Summarise' }]) });
      expect(body.choices[0].message.content).toBe(`${PREFIX} Summarise`);
    }
  });

  it('streams a custom tool call with input fragments', async () => {
    const chunks = await stream({ messages: user('x'), tools: [grammarTool], tool_choice: { type: 'custom', custom: { name: 'city_grammar' } } });
    expect(chunks[0].choices[0].delta.tool_calls).toEqual([{ index: 0, id: expect.any(String), type: 'custom', custom: { name: 'city_grammar', input: '' } }]);
    const input = chunks
      .slice(1, -1)
      .map((chunk) => chunk.choices[0].delta.tool_calls![0].custom!.input)
      .join('');
    expect(input).toBe('Paris');
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('tool_calls');
  });

  it.each([
    [{ tools: 'nope' }, 'tools'],
    [{ tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
    [{ tools: [{ type: 'retrieval' }] }, 'tools[0].type'],
    [{ tool_choice: 'sometimes' }, 'tool_choice'],
    [{ messages: user([{ type: 'file', file: { file_data: 'https://example.com/a.pdf' } }]) }, 'messages[0].content[0].file.file_data'],
    [{ messages: user([{ type: 'file', file: { file_data: `data:application/pdf;base64,${btoa('not a pdf')}` } }]) }, 'messages[0].content[0].file.file_data'],
  ])('rejects %j with a 400 naming %s', async (change, param) => {
    const res = await post({ model: 'm', messages: user('hi'), ...change });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe(param);
  });
});

describe('logprobs', () => {
  const expectedLogprob = (position: number): number => Math.round((-0.1 * (position % 5) - 0.01) * 10_000) / 10_000;

  it('returns one entry per word with deterministic logprobs, bytes and top_logprobs', async () => {
    const body = await chat({ messages: user('héllo there'), logprobs: true, top_logprobs: 3 });
    const content = body.choices[0].message.content!;
    const logprobs = body.choices[0].logprobs!;
    expect(logprobs.refusal).toBeNull();
    const entries = logprobs.content!;
    expect(entries).toHaveLength(body.usage.completion_tokens);
    expect(entries.map((entry) => entry.token).join('')).toBe(content);
    expect(entries[0].token).toBe('Hello');
    expect(entries[1].token).toBe(' from');
    entries.forEach((entry, position) => {
      expect(entry.logprob).toBe(expectedLogprob(position));
      expect(entry.bytes).toEqual(Array.from(Buffer.from(entry.token, 'utf8')));
      expect(entry.top_logprobs).toHaveLength(3);
      expect(entry.top_logprobs[0]).toEqual({ token: entry.token, logprob: entry.logprob, bytes: entry.bytes });
      expect(entry.top_logprobs[1].token).toBe(`${entry.token}_alt1`);
      expect(entry.top_logprobs[2].token).toBe(`${entry.token}_alt2`);
      expect(entry.top_logprobs[1].logprob).toBeLessThan(entry.logprob);
      expect(entry.top_logprobs[2].logprob).toBeLessThan(entry.top_logprobs[1].logprob);
    });
    expect(entries[5].logprob).toBe(-0.01);
    expect(entries[3].logprob).toBe(-0.31);
    // UTF-8: "é" is two bytes.
    const accented = entries.find((entry) => entry.token === ' héllo')!;
    expect(accented.bytes).toHaveLength(7);
  });

  it('defaults to no alternatives, leaves logprobs null when not asked, and validates top_logprobs', async () => {
    const none = await chat({ messages: user('hi'), logprobs: true });
    expect(none.choices[0].logprobs!.content!.every((entry) => entry.top_logprobs.length === 0)).toBe(true);
    const notAsked = await chat({ messages: user('hi'), top_logprobs: 2 });
    expect(notAsked.choices[0].logprobs).toBeNull();
    const res = await post({ model: 'm', messages: user('hi'), logprobs: true, top_logprobs: 21 });
    expect(res.status).toBe(400);
  });

  it('puts one entry on each streamed content chunk', async () => {
    const chunks = await stream({ messages: user('a b'), logprobs: true, top_logprobs: 1 });
    expect(chunks[0].choices[0].logprobs).toBeNull();
    const words = chunks.slice(1, -1);
    expect(words).toHaveLength(8);
    words.forEach((chunk, position) => {
      const logprobs = chunk.choices[0].logprobs!;
      expect(logprobs.refusal).toBeNull();
      expect(logprobs.content).toHaveLength(1);
      expect(logprobs.content![0].token).toBe(chunk.choices[0].delta.content);
      expect(logprobs.content![0].logprob).toBe(expectedLogprob(position));
      expect(logprobs.content![0].top_logprobs).toHaveLength(1);
    });
    expect(chunks[chunks.length - 1].choices[0].logprobs).toBeNull();
  });
});

describe('refusal', () => {
  it('refuses when the last user text contains "refuse me"', async () => {
    const body = await chat({ messages: user('Please REFUSE ME politely') });
    expect(body.choices[0].message).toEqual({ role: 'assistant', content: null, refusal: "I can't help with that.", annotations: [] });
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage.completion_tokens).toBe(5);
  });

  it('streams the refusal as delta.refusal', async () => {
    const chunks = await stream({ messages: user('refuse me') });
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: null, refusal: '' });
    const text = chunks
      .slice(1, -1)
      .map((chunk) => chunk.choices[0].delta.refusal)
      .join('');
    expect(text).toBe("I can't help with that.");
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('stop');
  });
});

describe('search annotations', () => {
  it.each([[{ web_search_options: {} }], [{ enable_search: true }]])('adds a url_citation for %j', async (option) => {
    const body = await chat({ messages: user('news today'), ...option });
    const content = body.choices[0].message.content!;
    expect(body.choices[0].message.annotations).toEqual([
      {
        type: 'url_citation',
        url_citation: { start_index: 0, end_index: content.length - 1, title: 'Emulated source', url: 'https://example.com/emulated' },
      },
    ]);
  });

  it('adds none without the option, or when streaming', async () => {
    expect((await chat({ messages: user('news'), enable_search: false })).choices[0].message.annotations).toEqual([]);
    const chunks = await stream({ messages: user('news'), web_search_options: {} });
    expect(JSON.stringify(chunks)).not.toContain('url_citation');
  });
});

describe('content filter and stop sequences', () => {
  it('cuts to 3 words with finish_reason "content_filter" on "trigger filter"', async () => {
    const body = await chat({ messages: user('please Trigger Filter now') });
    expect(body.choices[0].message.content).toBe('Hello from the');
    expect(body.choices[0].finish_reason).toBe('content_filter');
    expect(body.usage.completion_tokens).toBe(3);

    const chunks = await stream({ messages: user('trigger filter') });
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe('Hello from the');
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('content_filter');

    const shorter = await chat({ messages: user('trigger filter'), max_tokens: 2 });
    expect(shorter.choices[0].finish_reason).toBe('length');
  });

  it('cuts before the first stop sequence (string or array) with finish_reason "stop"', async () => {
    const single = await chat({ messages: user('alpha beta STOP gamma'), stop: 'STOP' });
    expect(single.choices[0].message.content).toBe(`${PREFIX} alpha beta`);
    expect(single.choices[0].finish_reason).toBe('stop');
    expect(single.usage.completion_tokens).toBe(countWords(`${PREFIX} alpha beta`));

    const array = await chat({ messages: user('alpha beta gamma'), stop: ['gamma', 'emulator'] });
    expect(array.choices[0].message.content).toBe('Hello from the');
    expect(array.choices[0].finish_reason).toBe('stop');

    const absent = await chat({ messages: user('alpha'), stop: ['zzz'] });
    expect(absent.choices[0].message.content).toBe(`${PREFIX} alpha`);

    const streamed = await stream({ messages: user('alpha beta STOP gamma'), stop: ['STOP'] });
    expect(streamed.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe(`${PREFIX} alpha beta`);
    expect(streamed[streamed.length - 1].choices[0].finish_reason).toBe('stop');

    const limited = await chat({ messages: user('alpha beta STOP gamma'), stop: 'STOP', max_tokens: 3 });
    expect(limited.choices[0].finish_reason).toBe('length');

    const tooMany = await post({ model: 'm', messages: user('x'), stop: ['a', 'b', 'c', 'd', 'e'] });
    expect(tooMany.status).toBe(400);
  });
});

describe('cached tokens', () => {
  it('reports cached_tokens = 0 normally and floor(prompt / 2) when a content part has cache_control', async () => {
    const plain = await chat({ messages: user('hello world') });
    expect(plain.usage.prompt_tokens_details).toEqual({ cached_tokens: 0, audio_tokens: 0 });

    const messages = [
      { role: 'system', content: [{ type: 'text', text: 'a long system prompt here', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: 'hi' },
    ];
    const cached = await chat({ messages });
    const prompt = 2 + (5 + 4) + (1 + 4);
    expect(cached.usage.prompt_tokens).toBe(prompt);
    expect(cached.usage.prompt_tokens_details.cached_tokens).toBe(Math.floor(prompt / 2));
  });
});

describe('audio output', () => {
  type AudioMessage = { content: string | null; audio?: { id: string; data: string; expires_at: number; transcript: string } };
  type AudioChunk = { choices: { delta: { role?: string; content?: string | null; audio?: { id?: string; data?: string; transcript?: string; expires_at?: number } }; finish_reason: string | null }[] };
  const spoken = { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } };

  it('speaks a text reply: content null, a valid WAV of one 20 ms tone per word, the text as transcript, audio tokens in usage', async () => {
    const body = await chat({ messages: user('say hi'), ...spoken });
    const message = body.choices[0].message as unknown as AudioMessage;
    const text = `${PREFIX} say hi`;
    expect(message.content).toBeNull();
    expect(message.audio).toEqual({ id: expect.stringMatching(/^audio_[A-Za-z0-9]{32}$/), data: expect.any(String), expires_at: expect.any(Number), transcript: text });
    const bytes = Buffer.from(message.audio!.data, 'base64');
    expect(bytes).toEqual(emulatedAudio(text, 'wav'));
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(bytes.subarray(8, 16).toString('ascii')).toBe('WAVEfmt ');
    expect(bytes.readUInt32LE(24)).toBe(24_000);
    expect(bytes.readUInt32LE(40)).toBe(countWords(text) * 480 * 2);
    expect(bytes.length).toBe(44 + countWords(text) * 960);
    const words = countWords(text);
    expect(body.usage.completion_tokens).toBe(words + 4 * words);
    expect((body.usage as unknown as { completion_tokens_details: { audio_tokens: number } }).completion_tokens_details.audio_tokens).toBe(4 * words);
  });

  it('answers other formats with deterministic bytes, and refuses audio output without voice or a known format', async () => {
    const pcm = (await chat({ messages: user('x'), modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'pcm16' } })).choices[0].message as unknown as AudioMessage;
    expect(Buffer.from(pcm.audio!.data, 'base64')).toEqual(emulatedAudio(`${PREFIX} x`, 'pcm16'));
    const mp3 = (await chat({ messages: user('x'), modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'mp3' } })).choices[0].message as unknown as AudioMessage;
    expect(Buffer.from(mp3.audio!.data, 'base64').subarray(0, 19).toString('ascii')).toBe('EMULATED mp3 AUDIO\n');
    expect((await post({ model: 'm', messages: user('x'), modalities: ['text', 'audio'] })).status).toBe(400);
    expect((await post({ model: 'm', messages: user('x'), modalities: ['audio'], audio: { voice: 'alloy', format: 'ogg' } })).status).toBe(400);
    // `audio` without the audio modality is ignored.
    expect((await chat({ messages: user('x'), audio: { voice: 'alloy', format: 'wav' } })).choices[0].message.content).toBe(`${PREFIX} x`);
  });

  it('streams delta.audio as OpenAI does: id with the first transcript word, the other words, data pieces, then expires_at', async () => {
    const chunks = (await stream({ messages: user('one two three four five six seven eight nine ten'), ...spoken, stream_options: { include_usage: true } })) as unknown as AudioChunk[];
    const deltas = chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0].delta);
    const text = `${PREFIX} one two three four five six seven eight nine ten`;
    expect(deltas[0]).toEqual({ role: 'assistant', content: null, refusal: null });
    const audio = deltas.slice(1, -1).map((delta) => delta.audio!);
    const id = audio[0].id!;
    expect(deltas[1]).toEqual({ content: null, audio: { id, transcript: 'Hello' } });
    expect(audio.map((piece) => piece.transcript ?? '').join('')).toBe(text);
    const data = audio.filter((piece) => piece.data !== undefined);
    expect(data.length).toBeGreaterThan(1);
    expect(data[0].id).toBe(id);
    expect(Buffer.concat(data.map((piece) => Buffer.from(piece.data!, 'base64')))).toEqual(emulatedAudio(text, 'wav'));
    expect(audio.at(-1)).toEqual({ id, expires_at: expect.any(Number) });
    expect(deltas.at(-1)).toEqual({});
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    const usage = (chunks.at(-1) as unknown as { usage: { completion_tokens: number; completion_tokens_details: { audio_tokens: number } } }).usage;
    expect(usage.completion_tokens_details.audio_tokens).toBe(4 * countWords(text));
    expect(usage.completion_tokens).toBe(5 * countWords(text));
  });
});

describe('stream event text', () => {
  it.each([
    ['text, two choices, with usage', { messages: user('Hello "quoted" \u00e9 \u{1F44B} there'), n: 2, stream_options: { include_usage: true } }],
    ['a refusal', { messages: user('refuse me') }],
    ['a tool call', { messages: user('weather please'), tools: [weatherTool] }],
    ['logprobs', { messages: user('a b'), logprobs: true, top_logprobs: 1 }],
  ])('is each chunk exactly as JSON.stringify writes it, key order included (%s)', async (_name, body) => {
    const res = await post({ model: 'gpt-4o-mini', ...body, stream: true });
    const events = (await res.text()).split('\n\n').filter((event) => event !== '' && event !== 'data: [DONE]');
    expect(events.length).toBeGreaterThan(2);
    for (const event of events) {
      const data = event.slice('data: '.length);
      const chunk = JSON.parse(data) as Record<string, unknown>;
      expect(Object.keys(chunk).slice(0, 7)).toEqual(['id', 'object', 'created', 'model', 'service_tier', 'system_fingerprint', 'choices']);
      for (const choice of chunk.choices as object[]) expect(Object.keys(choice)).toEqual(['index', 'delta', 'logprobs', 'finish_reason']);
      expect(data).toBe(JSON.stringify(chunk));
    }
  });
});
