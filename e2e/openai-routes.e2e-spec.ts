import path from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, streamText } from 'ai';
import OpenAI, { BadRequestError } from 'openai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
/** Credits of tokens priced $0.15 / $0.60 per million, at 2,000,000 credits per USD. */
const creditsFor = (prompt: number, completion: number) => (prompt * 300_000 + completion * 1_200_000) / 1e6;
const PROMPT = 'Say this is a test';

/**
 * The OpenAI routes the official `openai` SDK calls beyond chat (moderations, legacy
 * completions), the Responses fields the gateway does not serve, and `POST /messages` through
 * the Vercel AI SDK's Anthropic provider, against the standalone gateway with every upstream
 * played by the emulator; billed as the ledger shows.
 */
describe('OpenAI routes beyond chat, and /messages, end to end', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let client: OpenAI;
  let key: string;
  let accountId: string;
  /** The ledger row of a request, once billing has it. */
  const ledgerRow = async (requestId: string): Promise<UsageEntry> => {
    let row: UsageEntry | undefined;
    await eventually(async () => {
      row = (await harness.usageEntries(accountId, 50)).find((entry) => entry.requestId === requestId);
      return row !== undefined;
    }, 10_000);
    return row!;
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/openai-routes-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    ({ key, accountId } = await harness.paidKey(20_000_000));
    client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  describe('moderations.create', () => {
    it('flags what the upstream flags, one result per input, and journals the free request at 0 credits', async () => {
      const { data, response } = await client.moderations.create({ model: 'omni-moderation-latest', input: ['I like my cat.', 'This is harmful.'] }).withResponse();
      expect(data.model).toBe('openai/omni-moderation-latest');
      expect(data.results.map((result) => result.flagged)).toEqual([false, true]);
      expect(data.results[1].categories.violence).toBe(true);
      expect(data.results[0].category_scores.violence).toBeLessThan(0.01);
      expect(response.headers.get('x-gateway-deployment')).toBe('openai/omni-moderation-latest');
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ endpoint: 'moderations', model: 'openai/omni-moderation-latest', credits: '0' });
      expect(row.units?.input_tokens).toBeGreaterThan(0);
    });

    it("moderates text and an image with the default model, as OpenAI's API defaults it", async () => {
      const moderation = await client.moderations.create({
        input: [
          { type: 'text', text: 'Is this picture fine?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      });
      expect(moderation.model).toBe('openai/omni-moderation-latest');
      expect(moderation.results).toHaveLength(1);
      expect(moderation.results[0].category_applied_input_types.violence).toEqual(['text', 'image']);
    });

    it('bills a priced model by the input tokens, and refuses an image it cannot read', async () => {
      const moderation = (await client.moderations.create({ model: 'paid-moderation', input: 'one two three four' })) as OpenAI.ModerationCreateResponse & WithMeta;
      expect(moderation.results[0].flagged).toBe(false);
      // The gateway tokenizer's count of the text (moderation answers report no usage), at $1 per million.
      expect(moderation.meta?.usage?.credits_used).toBe(4 * 2);
      const refused = await client.moderations.create({ model: 'paid-moderation', input: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).message).toContain("input: 'acme/paid-moderation' moderates text only");
    });

    it('refuses a chat model and a huge input list with a 400 naming the field', async () => {
      const chat = await client.moderations.create({ model: 'mini', input: 'hello' }).catch((error: unknown) => error);
      expect((chat as BadRequestError).message).toContain("model: 'acme/chat-mini' is an openai/chat-completions model, not a moderation model.");
      const huge = await client.moderations.create({ model: 'omni-moderation-latest', input: Array.from({ length: 3000 }, () => 'x') }).catch((error: unknown) => error);
      expect((huge as BadRequestError).message).toContain('input: Expected at most 2048 inputs. Received 3000');
    });
  });

  describe('completions.create', () => {
    it('completes a prompt whole, billed by the upstream usage, with its ledger row', async () => {
      const { data, response } = await client.completions.create({ model: 'instruct', prompt: PROMPT, max_tokens: 50 }).withResponse();
      const completion = data as OpenAI.Completion & WithMeta;
      expect(completion).toMatchObject({ object: 'text_completion', model: 'openai/gpt-3.5-turbo-instruct' });
      expect(completion.choices).toEqual([{ text: ` Hello from the emulator. You wrote: ${PROMPT}`, index: 0, logprobs: null, finish_reason: 'stop' }]);
      const { prompt_tokens: prompt, completion_tokens: generated } = completion.usage!;
      expect([prompt, generated]).toEqual([5, 11]);
      expect(completion.meta?.usage?.credits_used).toBe(creditsFor(prompt, generated));
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ endpoint: 'completions', model: 'openai/gpt-3.5-turbo-instruct', deployment: 'openai/gpt-3.5-turbo-instruct', units: { input_tokens: 5, output_tokens: 11 } });
    });

    it('fills in the middle on the chat model whose source serves completions, echo and logprobs as the source answers them', async () => {
      const completion = await client.completions.create({ model: 'coder', prompt: 'def add(a, b):', suffix: 'print(add(1, 2))', max_tokens: 64, echo: true, logprobs: 2, n: 2 });
      expect(completion.model).toBe('acme/coder');
      expect(completion.choices).toHaveLength(2);
      // The echoed prompt, then what was generated between it and the suffix.
      expect(completion.choices[0].text).toBe('def add(a, b): Hello from the emulator. You wrote: def add(a, b): Then: print(add(1, 2))');
      expect(completion.choices[0].logprobs?.tokens?.length).toBeGreaterThan(0);
    });

    it('streams text_completion chunks whose text is the whole answer, the usage last, then [DONE]', async () => {
      const stream = await client.completions.create({ model: 'instruct', prompt: PROMPT, max_tokens: 50, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let usageChunk: (OpenAI.Completion & WithMeta) | undefined;
      for await (const chunk of stream) {
        expect(chunk.model).toBe('openai/gpt-3.5-turbo-instruct');
        for (const choice of chunk.choices) text += choice.text;
        if (chunk.usage) usageChunk = chunk as OpenAI.Completion & WithMeta;
      }
      expect(text).toBe(` Hello from the emulator. You wrote: ${PROMPT}`);
      expect(usageChunk?.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 11 });
      expect(usageChunk?.meta?.usage?.credits_used).toBe(creditsFor(5, 11));
      // Without include_usage the usage chunk (which the gateway bills by) stays with the gateway.
      const raw = await fetch(`${harness.gateway}/v1/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'instruct', prompt: PROMPT, stream: true }) });
      const events = (await raw.text()).split('\n\n').filter(Boolean);
      expect(events.at(-1)).toBe('data: [DONE]');
      expect(events.some((event) => event.includes('"usage"'))).toBe(false);
    });

    it('bills a stream its client leaves half-way for what was generated by then', async () => {
      const controller = new AbortController();
      const { data: stream, response } = await client.completions.create({ model: 'test/slow-instruct', prompt: PROMPT, max_tokens: 50, stream: true }, { signal: controller.signal }).withResponse();
      let pieces = 0;
      try {
        for await (const chunk of stream) {
          pieces += chunk.choices.length;
          if (pieces >= 2) controller.abort();
        }
      } catch {
        // The abort ends the iteration.
      }
      const row = await ledgerRow(response.headers.get('x-request-id')!);
      expect(row.endpoint).toBe('completions');
      expect(row.units?.output_tokens).toBeGreaterThan(0);
      expect(row.units?.output_tokens).toBeLessThan(10);
    });

    it('refuses a chat model whose sources do not serve completions, naming the route to use', async () => {
      const refused = await client.completions.create({ model: 'mini', prompt: PROMPT }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).message).toContain("model: 'acme/chat-mini' is not served by POST /v1/completions");
      expect((refused as BadRequestError).message).toContain('POST /v1/chat/completions');
      const pinned = await client.completions.create({ model: 'coder', prompt: PROMPT, provider: 'openai' } as OpenAI.CompletionCreateParamsNonStreaming).catch((error: unknown) => error);
      expect((pinned as BadRequestError).message).toContain('provider: openai serves no legacy completions for acme/coder');
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['a huge prompt array', { prompt: Array.from({ length: 3000 }, () => 'x') }, 'prompt: Expected at most 2048 prompts. Received 3000'],
      ['an absurd n', { prompt: PROMPT, n: 100_000 }, 'n: Expected'],
      ['best_of past 20', { prompt: PROMPT, best_of: 1000 }, 'best_of: Expected'],
      ['best_of below n', { prompt: PROMPT, n: 3, best_of: 2 }, 'best_of: Expected at least n (3)'],
      ['best_of with a stream', { prompt: PROMPT, best_of: 2, stream: true }, 'best_of: Expected 1 or nothing with stream: true'],
      ['max_tokens past the output limit', { prompt: PROMPT, max_tokens: 1_000_000_000 }, 'max_tokens: Expected at most 4096 for openai/gpt-3.5-turbo-instruct'],
      ['too many completions in all', { prompt: Array.from({ length: 100 }, () => 'x'), n: 50 }, 'n: Expected at most 2048 completions in all'],
      ['a field the API does not have', { prompt: PROMPT, max_token: 5 }, "max_token: Expected one of the fields 'model', 'prompt',"],
    ])('refuses %s with a 400 naming the field, before any upstream call', async (_name, body, message) => {
      const before = emulator.requests.length;
      const answer = await call<{ message: string }>(`${harness.gateway}/v1/completions`, { token: key, body: { model: 'instruct', ...body } });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain(message);
      expect(emulator.requests.slice(before).filter((request) => request.path.endsWith('/completions'))).toEqual([]);
    });
  });

  describe('responses.create with fields the gateway does not serve', () => {
    it.each<[string, Record<string, unknown>, string]>([
      ['background: true', { background: true }, 'background: Expected false or nothing: background mode is not served here'],
      ['a conversation', { conversation: 'conv_123' }, "conversation: Expected nothing: OpenAI's conversation objects live in an OpenAI account"],
      ['a prompt template', { prompt: { id: 'pmpt_123', version: '2' } }, 'prompt: Expected nothing: prompt templates live in an OpenAI account'],
    ])('refuses %s with a 400 naming it, rather than answering as if it were not sent', async (_name, extra, message) => {
      const refused = await client.responses.create({ model: 'mini', input: PROMPT, ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).message).toContain(message);
    });

    it('still answers what the SDK sends by default, background: false included', async () => {
      const response = await client.responses.create({ model: 'mini', input: PROMPT, background: false, store: false });
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
    });
  });

  describe("the Vercel AI SDK's Anthropic provider, which posts to <baseURL>/messages", () => {
    it('generates and streams through POST /messages on an Anthropic model and an OpenAI one', async () => {
      const posted: string[] = [];
      const anthropic = createAnthropic({
        baseURL: harness.gateway,
        apiKey: key,
        fetch: (url, init) => {
          posted.push(String(url));
          return fetch(url, init);
        },
      });
      for (const model of ['claude', 'mini']) {
        const generated = await generateText({ model: anthropic(model), prompt: PROMPT, maxOutputTokens: 100, maxRetries: 0 });
        expect(generated.text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
        expect(generated.usage.inputTokens).toBeGreaterThan(0);
        const streamed = streamText({ model: anthropic(model), prompt: PROMPT, maxOutputTokens: 100, maxRetries: 0 });
        let text = '';
        for await (const piece of streamed.textStream) text += piece;
        expect(text).toBe(generated.text);
        expect((await streamed.usage).outputTokens).toBe(generated.usage.outputTokens);
      }
      expect(new Set(posted)).toEqual(new Set([`${harness.gateway}/messages`]));
    });
  });
});
