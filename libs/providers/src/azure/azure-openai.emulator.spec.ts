import { chunksOf } from '../transport/chunk-stream.testing';
// The Azure OpenAI adapter (../azure) against the emulator's Azure route: URL, api-version,
// `api-key`, non-streamed and streamed answers (usage in the last chunk). It lives here because
// the emulator may not import the providers lib (that would make the two projects a cycle).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../../tools/emulator/src/emulator';
import { AZURE_API_VERSION, AzureOpenAiChatAdapter } from './azure-openai.chat';
import type { ProviderTarget, UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import { UpstreamHttpError } from '../upstream.errors';

const KEY = 'azure-adapter-key';
const OPTIONS = { timeoutMs: 10_000 };
const REPLY = 'Hello from the emulator. You said: How are you?';
const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;
const PROMPT = 2 + (3 + 4);

let emulator: RunningEmulator;
const adapter = new AzureOpenAiChatAdapter();

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

function target(overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return { provider: 'azure', model: 'gpt-4o-prod', baseUrl: emulator.url, apiKey: KEY, ...overrides };
}

const request: UpstreamChatRequest = { model: 'gpt-4o-prod', messages: [{ role: 'user', content: 'How are you?' }] };

describe('AzureOpenAiChatAdapter against the emulator', () => {
  it('gets a completion through the deployment path with the api-key header', async () => {
    const completion = await adapter.chat(target(), request, OPTIONS);
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-prod',
      choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
      usage: { prompt_tokens: PROMPT, completion_tokens: countWords(REPLY), total_tokens: PROMPT + countWords(REPLY) },
    });
    const recorded = emulator.requests[emulator.requests.length - 1];
    expect(recorded.path).toBe(`/openai/deployments/gpt-4o-prod/chat/completions?api-version=${AZURE_API_VERSION}`);
    expect(recorded.headers['api-key']).toBe(KEY);
    expect(recorded.headers.authorization).toBeUndefined();
  });

  it('streams with usage in the last chunk', async () => {
    const chunks: UpstreamChatChunk[] = [];
    for await (const chunk of chunksOf(await adapter.stream(target(), request, OPTIONS))) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(REPLY);
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((reason) => reason !== null)).toEqual(['stop']);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: countWords(REPLY), total_tokens: PROMPT + countWords(REPLY) });
    const recorded = emulator.requests[emulator.requests.length - 1];
    expect(recorded.headers['api-key']).toBe(KEY);
    expect(recorded.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('encodes a deployment name with a slash and maps a wrong key to a 401', async () => {
    const completion = await adapter.chat(target({ model: 'team/gpt-4o' }), { ...request, model: 'team/gpt-4o' }, OPTIONS);
    expect(completion.model).toBe('team/gpt-4o');
    expect(emulator.requests[emulator.requests.length - 1].path).toMatch(/^\/openai\/deployments\/team%2Fgpt-4o\/chat\/completions\?/);
    const refused = adapter.chat(target({ apiKey: 'wrong' }), request, OPTIONS);
    await expect(refused).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(refused).rejects.toMatchObject({ status: 401 });
  });
});
