import path from 'node:path';
import OpenAI from 'openai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };

/** Credits per token at the fixture's prices ($2 and $8 a million, 2,000,000 credits per USD). */
const creditsOf = (usage: { input_tokens: number; output_tokens: number }) => usage.input_tokens * 4 + usage.output_tokens * 16;
const PROMPT = 'Count the words in this sentence';

/**
 * A source the catalogue declares `native: [responses]` that has no `/v1/responses` (an older
 * vLLM, llama.cpp, most OpenAI-compatible servers answer 404 there): the Responses request is
 * translated to chat completions on the same source, unstreamed and streamed, billed once, and
 * the source is remembered, so its next request goes straight to chat completions. The emulator
 * plays the server with its Responses route taken out.
 */
describe('Responses requests to a source without the Responses API', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;

  /** The emulator's calls for one upstream model, by path. */
  const callsFor = (model: string) => emulator.requests.filter((request) => (request.body as { model?: unknown } | undefined)?.model === model).map((request) => request.path);
  /** The warning the gateway logs when it starts translating for a source. */
  const warningsFor = (model: string) => harness.process.output().split('\n').filter((line) => line.includes(`Source vllm (model ${model}) answered 404 to the Responses API`));
  /** The account's usage rows, once `count` of them were applied. */
  const ledgerRows = async (accountId: string, count: number) => {
    await eventually(async () => (await harness.usageEntries(accountId, 10)).length >= count, 15_000, 100);
    return harness.usageEntries(accountId, 10);
  };

  beforeAll(async () => {
    emulator = await startEmulator({ withoutRoutes: ['POST /v1/responses'] });
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-without-native-api-catalogue.yaml'), VLLM_BASE_URL: `${emulator.url}/v1` });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('answers responses.create translated on the same source, billed once, and sends the next request straight to chat completions', async () => {
    const { accountId, key } = await harness.paidKey(1_000_000);
    const openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });

    const response = (await openai.responses.create({ model: 'served', input: PROMPT })) as OpenAI.Responses.Response & WithMeta;
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'vllm/served' });
    expect(response.output_text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
    expect(callsFor('served-model')).toEqual(['/v1/responses', '/v1/chat/completions']);
    expect(response.meta!.usage!.credits_used).toBe(creditsOf(response.usage!));
    const [row] = await ledgerRows(accountId, 1);
    expect({ endpoint: row.endpoint, model: row.model, units: row.units, credits: Number(row.credits) }).toEqual({
      endpoint: 'responses',
      model: 'vllm/served',
      units: { input_tokens: response.usage!.input_tokens, output_tokens: response.usage!.output_tokens },
      credits: creditsOf(response.usage!),
    });

    const again = (await openai.responses.create({ model: 'served', input: 'And now?' })) as OpenAI.Responses.Response & WithMeta;
    expect(again.output_text).toBe('Hello from the emulator. You said: And now?');
    expect(callsFor('served-model')).toEqual(['/v1/responses', '/v1/chat/completions', '/v1/chat/completions']);
    const rows = await ledgerRows(accountId, 2);
    expect(rows).toHaveLength(2);
    expect(rows.map((entry) => Number(entry.credits)).sort()).toEqual([creditsOf(response.usage!), creditsOf(again.usage!)].sort());
    expect(await harness.balance(key)).toBe(1_000_000 - creditsOf(response.usage!) - creditsOf(again.usage!));
    expect(warningsFor('served-model')).toHaveLength(1);
  });

  it('streams responses.stream translated on the same source, billed once, and sends the next stream straight to chat completions', async () => {
    const { accountId, key } = await harness.paidKey(1_000_000);
    const openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });

    const stream = openai.responses.stream({ model: 'served-streamed', input: PROMPT });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = (await stream.finalResponse()) as OpenAI.Responses.Response & WithMeta;
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(final).toMatchObject({ status: 'completed', model: 'vllm/served-streamed' });
    expect(final.output_text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
    expect(final.meta!.usage!.credits_used).toBe(creditsOf(final.usage!));
    expect(callsFor('streamed-model')).toEqual(['/v1/responses', '/v1/chat/completions']);
    const streamedUpstream = emulator.requests.filter((request) => request.path === '/v1/chat/completions' && (request.body as { model?: unknown }).model === 'streamed-model');
    expect(streamedUpstream.map((request) => (request.body as { stream?: unknown }).stream)).toEqual([true]);
    const [row] = await ledgerRows(accountId, 1);
    expect({ endpoint: row.endpoint, credits: Number(row.credits) }).toEqual({ endpoint: 'responses', credits: creditsOf(final.usage!) });

    const second = openai.responses.stream({ model: 'served-streamed', input: 'And now?' });
    for await (const event of second) void event;
    expect((await second.finalResponse()).output_text).toBe('Hello from the emulator. You said: And now?');
    expect(callsFor('streamed-model')).toEqual(['/v1/responses', '/v1/chat/completions', '/v1/chat/completions']);
    expect(await ledgerRows(accountId, 2)).toHaveLength(2);
    expect(warningsFor('streamed-model')).toHaveLength(1);
  });
});
