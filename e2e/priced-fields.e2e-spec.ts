import path from 'node:path';
import { eventually } from '@igw/testing';
import { call, expectErrorBody } from './support/http';
import { startScriptedUpstream, type ScriptedUpstream } from './support/scripted-upstream';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type ChatAnswer = { meta: { usage: { credits_used: number } } };

/**
 * Fields that change what the upstream charges (a service tier, one-hour cache writes, a prompt
 * past a size threshold) are billed at the catalogue's price for them, held at the dearest price
 * the request may incur, and refused with nothing sent where the catalogue has no price. The
 * ledger (billing re-prices every usage event) applies each charge as the gateway made it.
 */
describe('fields that change the upstream price', () => {
  let upstream: ScriptedUpstream;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/priced-fields-catalogue.yaml'),
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      ANTHROPIC_API_KEY: 'k',
      ANTHROPIC_BASE_URL: upstream.url,
      GEMINI_API_KEY: 'k',
      GEMINI_BASE_URL: `${upstream.url}/v1beta`,
    });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await upstream?.close();
  });

  const chat = (key: string, body: Record<string, unknown>) =>
    call<ChatAnswer>(`${harness.gateway}/v1/chat/completions`, { token: key, body: { messages: [{ role: 'user', content: 'hello' }], ...body } });
  /** The ledger applied exactly what the answers said they cost. */
  const expectBalance = (key: string, balance: number) => eventually(async () => (await harness.balance(key)) === balance, 10_000);

  it('bills a priority request at the priority price, streamed or not, and holds at that price', async () => {
    upstream.usage.openai = { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 };
    const { accountId, key } = await harness.paidKey(1_000_000);
    // Standard: 1,000 × $1/M + 100 × $4/M = $0.0014; priority: 1,000 × $2/M + 100 × $8/M = $0.0028.
    const standard = await chat(key, { model: 'tiered', service_tier: 'default' });
    expect(standard.body.meta.usage.credits_used).toBe(2_800);
    const priority = await chat(key, { model: 'tiered', service_tier: 'priority' });
    expect(priority.status).toBe(200);
    expect(priority.body.meta.usage.credits_used).toBe(5_600);
    expect(upstream.received.at(-1)?.body.service_tier).toBe('priority');

    const streamed = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiered', service_tier: 'priority', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(/"credits_used":(\d+)/.exec(await streamed.text())?.[1]).toBe('5600');

    await expectBalance(key, 1_000_000 - 2_800 - 2 * 5_600);
    const [latest] = await harness.usageEntries(accountId, 1);
    expect(latest.prices).toEqual([
      { unit: 'input_tokens', price: 2, per: 1_000_000 },
      { unit: 'output_tokens', price: 8, per: 1_000_000 },
    ]);

    // The hold is the priority price too: 1,000 output tokens at $8/M (16,000 credits) do not fit in 12,000.
    const small = await harness.paidKey(12_000);
    expectErrorBody(await chat(small.key, { model: 'tiered', service_tier: 'priority', max_tokens: 1_000 }), 403, '/v1/chat/completions');
    expect((await chat(small.key, { model: 'tiered', max_tokens: 1_000 })).status).toBe(200);
  });

  it('refuses a service tier the model has no price for, sending nothing upstream', async () => {
    const { key } = await harness.paidKey(1_000_000);
    const sent = upstream.received.length;
    expectErrorBody(
      await chat(key, { model: 'tiered', service_tier: 'flex' }),
      400,
      '/v1/chat/completions',
      /^Body validation error! service_tier: the catalogue has no price for this tier on test\/tiered \(a tier changes what the upstream charges\)\. Expected one of 'auto', 'default', 'priority'\. Received 'flex'$/,
    );
    expectErrorBody(await chat(key, { model: 'claude', service_tier: 'priority' }), 400, '/v1/chat/completions', /^Body validation error! service_tier: /);
    expect(upstream.received.length).toBe(sent);
    expect(await harness.balance(key)).toBe(1_000_000);
  });

  it('bills one-hour cache writes at the one-hour price', async () => {
    upstream.usage.anthropic = {
      input_tokens: 1_000,
      cache_creation_input_tokens: 3_000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 },
      output_tokens: 100,
    };
    const { accountId, key } = await harness.paidKey(1_000_000);
    const content = [
      { type: 'text', text: 'a long document', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'the question', cache_control: { type: 'ephemeral' } },
    ];
    const answer = await chat(key, { model: 'claude', messages: [{ role: 'user', content }] });
    expect(answer.status).toBe(200);
    expect(upstream.received.at(-1)?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a long document', cache_control: { type: 'ephemeral', ttl: '1h' } },
          { type: 'text', text: 'the question', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    // 1,000 × $1/M + 1,000 five-minute writes × $1.25/M + 2,000 one-hour writes × $2/M + 100 × $5/M = $0.00675.
    expect(answer.body.meta.usage.credits_used).toBe(13_500);
    await expectBalance(key, 1_000_000 - 13_500);
    const [entry] = await harness.usageEntries(accountId, 1);
    expect(entry.units).toEqual({ input_tokens: 1_000, cache_write_input_tokens: 1_000, cache_write_1h_input_tokens: 2_000, output_tokens: 100 });
  });

  it('refuses one-hour cache writes on a model that has no price for them, sending nothing upstream', async () => {
    const { key } = await harness.paidKey(1_000_000);
    const sent = upstream.received.length;
    const content = [{ type: 'text', text: 'a long document', cache_control: { type: 'ephemeral', ttl: '1h' } }];
    expectErrorBody(
      await chat(key, { model: 'claude-5m', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content }] }),
      400,
      '/v1/chat/completions',
      /^Body validation error! messages\[1\]\.content\[0\]\.cache_control\.ttl: the catalogue has no price for one-hour cache writes on test\/claude-5m .*Expected '5m'\. Received '1h'$/,
    );
    expect(upstream.received.length).toBe(sent);
    expect(await harness.balance(key)).toBe(1_000_000);
  });

  it('takes one-hour cache writes on a model whose provider charges none for cache writes, billed as input', async () => {
    upstream.usage.openai = { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 };
    const { accountId, key } = await harness.paidKey(1_000_000);
    const content = [{ type: 'text', text: 'a long document', cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const answer = await chat(key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
    expect(answer.status).toBe(200);
    expect(upstream.received.at(-1)).toMatchObject({ path: '/v1/chat/completions', body: { model: 'gpt-4o-mini' } });
    // 1,000 × $0.15/M + 100 × $0.6/M = $0.00021.
    expect(answer.body.meta.usage.credits_used).toBe(420);
    await expectBalance(key, 1_000_000 - 420);
    const entries = await harness.usageEntries(accountId, 10);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ model: 'openai/gpt-4o-mini', units: { input_tokens: 1_000, output_tokens: 100 }, credits: '420' });

    // Where the entry does charge cache writes but has no one-hour price, the refusal stands, whatever the wire format.
    const sent = upstream.received.length;
    expectErrorBody(
      await chat(key, { model: 'gpt-cache-writes', messages: [{ role: 'user', content }] }),
      400,
      '/v1/chat/completions',
      /^Body validation error! messages\[0\]\.content\[0\]\.cache_control\.ttl: the catalogue has no price for one-hour cache writes on test\/gpt-cache-writes /,
    );
    expect(upstream.received.length).toBe(sent);
  });

  it('bills a prompt the upstream reports over 200,000 tokens at the dearer prices', async () => {
    upstream.usage.gemini = { promptTokenCount: 250_000, candidatesTokenCount: 100, totalTokenCount: 250_100 };
    const { accountId, key } = await harness.paidKey(10_000_000);
    const answer = await chat(key, { model: 'gemini-pro', max_tokens: 100 });
    expect(answer.status).toBe(200);
    // 250,000 × $2.5/M + 100 × $15/M = $0.6265 (not 250,000 × $1.25/M + 100 × $10/M = $0.3135).
    expect(answer.body.meta.usage.credits_used).toBe(1_253_000);
    await expectBalance(key, 10_000_000 - 1_253_000);
    const [entry] = await harness.usageEntries(accountId, 1);
    expect(entry).toMatchObject({ units: { input_tokens: 250_000, output_tokens: 100 }, credits: '1253000' });
    expect(entry.prices).toContainEqual({ unit: 'output_tokens', price: 15, per: 1_000_000, promptTokensAbove: 200_000 });

    // Up to the threshold: the base prices (200,000 × $1.25/M + 100 × $10/M = $0.251).
    upstream.usage.gemini = { promptTokenCount: 200_000, candidatesTokenCount: 100, totalTokenCount: 200_100 };
    expect((await chat(key, { model: 'gemini-pro', max_tokens: 100 })).body.meta.usage.credits_used).toBe(502_000);
  });
});
