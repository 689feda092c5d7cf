import type { ChatMessage } from '@igw/contracts';
import type { UpstreamChatRequest } from '../provider.types';
import { chunksOf } from '../transport/chunk-stream.testing';
// The OpenAI-format adapter against the emulator: what goes out for web search, per provider.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../../tools/emulator/src/emulator';
import { OpenAiChatAdapter, withSearchDialect } from './openai.chat';

const messages: ChatMessage[] = [{ role: 'user', content: 'What happened today?' }];

describe('web search in the OpenAI wire format', () => {
  it.each<[string, Partial<UpstreamChatRequest>, Partial<UpstreamChatRequest>]>([
    ['openai', { enable_search: true }, { web_search_options: {} }],
    ['openai', { enable_search: true, search_options: { search_strategy: 'turbo', enable_source: true } }, { web_search_options: { search_context_size: 'low' } }],
    ['azure', { enable_search: true, search_options: { search_strategy: 'max' } }, { web_search_options: { search_context_size: 'high' } }],
    ['openrouter', { enable_search: true, search_options: { search_strategy: 'agent', forced_search: true } }, { web_search_options: { search_context_size: 'high' } }],
    // The client's own web_search_options win; a disabled search sends nothing.
    ['openai', { enable_search: true, web_search_options: { search_context_size: 'medium' } }, { web_search_options: { search_context_size: 'medium' } }],
    ['openai', { enable_search: false, search_options: { search_strategy: 'max' } }, {}],
    // Servers that take the spec's fields themselves (e.g. Qwen's) get them unchanged.
    ['vllm', { enable_search: true, search_options: { search_strategy: 'max' } }, { enable_search: true, search_options: { search_strategy: 'max' } }],
    ['openai', {}, {}],
  ])('%s: %j goes out as %j', (provider, fields, expected) => {
    expect(withSearchDialect(provider, { model: 'm', messages, ...fields })).toEqual({ model: 'm', messages, ...expected });
  });

  describe('against the emulator', () => {
    let emulator: RunningEmulator;
    beforeAll(async () => {
      emulator = await startEmulator();
    });
    afterAll(async () => {
      await emulator.close();
    });

    it('sends web_search_options to OpenAI, streamed or not, and gets url_citation annotations back', async () => {
      const adapter = new OpenAiChatAdapter();
      const target = { provider: 'openai', model: 'gpt-4o-search-preview', baseUrl: `${emulator.url}/v1`, apiKey: 'k' };
      const request: UpstreamChatRequest = { model: target.model, messages, enable_search: true, search_options: { search_strategy: 'max' } };
      const completion = await adapter.chat(target, request, { timeoutMs: 5_000 });
      expect(emulator.requests.at(-1)!.body).toEqual({ model: target.model, messages, web_search_options: { search_context_size: 'high' }, stream: false });
      expect(completion.choices[0].message.annotations).toEqual([expect.objectContaining({ type: 'url_citation' })]);

      const chunks = [];
      for await (const chunk of chunksOf(await adapter.stream(target, request, { timeoutMs: 5_000 }))) chunks.push(chunk);
      expect(emulator.requests.at(-1)!.body).toMatchObject({ web_search_options: { search_context_size: 'high' }, stream: true });
      expect(emulator.requests.at(-1)!.body).not.toHaveProperty('enable_search');
      expect(chunks.length).toBeGreaterThan(1);
      // OpenAI reports no search count: a search request counts one call, streamed or not.
      expect(completion.usage?.web_search_calls).toBe(1);
      expect(chunks.at(-1)!.usage?.web_search_calls).toBe(1);
      const plain = await adapter.chat(target, { model: target.model, messages }, { timeoutMs: 5_000 });
      expect(plain.usage).not.toHaveProperty('web_search_calls');
    });
  });
});
