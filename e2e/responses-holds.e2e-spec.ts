import path from 'node:path';
import OpenAI, { BadRequestError, NotFoundError, PermissionDeniedError } from 'openai';
import { ErrorMessages } from '@igw/contracts';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** What a request ended as: the answer's status, or the error the SDK raised. */
const outcome = (request: Promise<unknown>) =>
  request.then(
    () => 'ok',
    (caught: unknown) => (caught instanceof PermissionDeniedError ? '403' : `unexpected: ${caught instanceof Error ? caught.message : String(caught)}`),
  );

/**
 * A stored conversation is held, bounded and owned like a sent one: the hold and the context
 * check count what goes upstream (the stored turns and every referenced item), nothing costly
 * runs for a key that cannot be let in, references are bounded, and a key's stored responses
 * are its own. Through the openai SDK against the standalone gateway, upstreams played by the
 * emulator, whose Anthropic format counts a token per word: a conversation of one-letter words
 * costs a token per two bytes, the dearest a prompt can be for its size.
 */
describe('Stored conversations are paid for, held and bounded like sent ones', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  const client = (key: string) => new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
  /** A first turn of about 120 KB: 60,000 one-letter words, 60,000 tokens upstream. */
  const longTurn = () => Array.from({ length: 60_000 }, () => 'a').join(' ');

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-store-catalogue.yaml'), ...emulatedProviders(emulator.url) });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  /** Every usage row of the account is in the ledger and its balance is what they left. */
  const settledBalance = async (accountId: string, key: string, rows: number) => {
    await eventually(async () => (await harness.usageEntries(accountId, 100)).length === rows, 30_000);
    return harness.balance(key);
  };

  it("twenty concurrent continuations of a stored conversation never take the account below zero", async () => {
    // About 80,000 credits: the first turn costs some 18,000 (60,000 tokens at 0.15 USD/M, 2M credits per USD), each continuation as much;
    // each is held at some 36,000 (its ~120 KB as tokens), so two or three are let in, never twenty.
    const { accountId, key } = await harness.paidKey(80_000);
    const openai = client(key);
    const first = await openai.responses.create({ model: 'claude', input: longTurn(), max_output_tokens: 16 });
    const continuations = await Promise.all(
      Array.from({ length: 20 }, () => outcome(openai.responses.create({ model: 'claude', previous_response_id: first.id, input: 'ok', max_output_tokens: 16, store: false }))),
    );
    const admitted = continuations.filter((result) => result === 'ok').length;
    expect(continuations.filter((result) => result !== 'ok' && result !== '403')).toEqual([]);
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThan(5);
    expect(await settledBalance(accountId, key, 1 + admitted)).toBeGreaterThanOrEqual(0);
    // Each admitted continuation was billed as the conversation it sent, not as its 90-byte body.
    const entries = await harness.usageEntries(accountId, 100);
    for (const entry of entries) expect(entry.units!.input_tokens).toBeGreaterThan(60_000);
  }, 120_000);

  it("twenty concurrent continuations never spend a key past its budget", async () => {
    const { accountId } = await harness.paidKey(100_000_000);
    // 0.04 USD: the first turn costs about 0.009, each continuation as much, each held at about 0.018.
    const budgeted = await call<{ id: string; key: string }>(`${harness.billing}/admin/v1/accounts/${accountId}/keys`, {
      token: harness.adminToken,
      body: { budget: { limit: '0.04', unit: 'usd', period: 'lifetime' } },
    });
    expect(budgeted.status).toBe(201);
    const openai = client(budgeted.body.key);
    const first = await openai.responses.create({ model: 'claude', input: longTurn(), max_output_tokens: 16 });
    const continuations = await Promise.all(
      Array.from({ length: 20 }, () => outcome(openai.responses.create({ model: 'claude', previous_response_id: first.id, input: 'ok', max_output_tokens: 16, store: false }))),
    );
    expect(continuations.filter((result) => result !== 'ok' && result !== '403')).toEqual([]);
    const admitted = continuations.filter((result) => result === 'ok').length;
    await eventually(async () => (await harness.usageEntries(accountId, 100)).length === 1 + admitted, 30_000);
    const spent = (await harness.usageEntries(accountId, 100)).reduce((sum, entry) => sum + Number(entry.usd), 0);
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(spent).toBeLessThanOrEqual(0.04);
  }, 120_000);

  it('lets a key with no credits in before any look-up or translation: a 403, not the translation\'s 400', async () => {
    const { key } = await harness.paidKey(0);
    // Nearly twenty thousand calls (the most the body's 100,000-node bound leaves room for), then an item the translation cannot carry: it is never reached.
    const input = [
      ...Array.from({ length: 19_990 }, (_, index) => ({ type: 'function_call' as const, call_id: `call_${index}`, name: 'f', arguments: '{}' })),
      { type: 'computer_call', call_id: 'call_x' },
    ];
    const refused = await client(key)
      .responses.create({ model: 'claude', input: input as never, previous_response_id: 'resp_0123456789abcdef0123456789abcdef' })
      .catch((caught: unknown) => caught);
    expect((refused as Error).message).toContain(ErrorMessages.creditsExhausted);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
  }, 60_000);

  it('bounds item references: at most 1,000 a request, and what they resolve to within BODY_LIMIT, each counted per reference', async () => {
    const { key } = await harness.paidKey(100_000_000);
    const openai = client(key);
    // One stored item of about 20 KB.
    const stored = await openai.responses.create({ model: 'claude', input: [{ type: 'message', id: 'msg_big_one', role: 'user', content: 'b '.repeat(10_000) }] as never, max_output_tokens: 16 });
    expect(stored.status).not.toBe('failed');
    const references = (count: number) => Array.from({ length: count }, () => ({ type: 'item_reference' as const, id: 'msg_big_one' }));
    const tooMany = await openai.responses.create({ model: 'claude', input: references(15_000) as never }).catch((caught: unknown) => caught);
    expect(tooMany).toBeInstanceOf(BadRequestError);
    expect((tooMany as BadRequestError).message).toContain('input: Expected at most 1000 item_reference items in one request');
    // 600 references of 20 KB: 12 MB of prompt from a 20 KB body, past the 10 MB BODY_LIMIT.
    const tooLarge = await openai.responses.create({ model: 'claude', input: references(600) as never }).catch((caught: unknown) => caught);
    expect(tooLarge).toBeInstanceOf(BadRequestError);
    expect((tooLarge as BadRequestError).message).toContain('input: the request with the stored items it references is larger than the 10485760-byte body limit (BODY_LIMIT)');
    // Named twice, it is sent twice.
    const twice = await openai.responses.create({ model: 'claude', input: [...references(2), { role: 'user', content: 'marker-twice' }] as never, max_output_tokens: 16, store: false });
    expect(twice.status).not.toBe('failed');
    const upstream = [...emulator.requests].reverse().find((one) => JSON.stringify(one.body ?? null).includes('marker-twice'));
    expect(JSON.stringify(upstream!.body).split('b b b b b').length - 1).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("keeps a key's stored responses its own: a sibling key of the same account cannot read, continue, reference or delete them", async () => {
    const { accountId, key } = await harness.paidKey(100_000_000);
    const sibling = await call<{ key: string }>(`${harness.billing}/admin/v1/accounts/${accountId}/keys`, { token: harness.adminToken, body: {} });
    const owner = client(key);
    const other = client(sibling.body.key);
    const created = await owner.responses.create({ model: 'mini', input: [{ type: 'message', id: 'msg_private_turn', role: 'user', content: 'private turn' }] as never });
    expect(await other.responses.retrieve(created.id).catch((caught: unknown) => caught)).toBeInstanceOf(NotFoundError);
    expect(await other.responses.inputItems.list(created.id).catch((caught: unknown) => caught)).toBeInstanceOf(NotFoundError);
    expect(await other.responses.create({ model: 'mini', previous_response_id: created.id, input: 'next' }).catch((caught: unknown) => caught)).toBeInstanceOf(NotFoundError);
    const referenced = await other.responses.create({ model: 'mini', input: [{ type: 'item_reference', id: 'msg_private_turn' }] as never }).catch((caught: unknown) => caught);
    expect(referenced).toBeInstanceOf(BadRequestError);
    expect((referenced as BadRequestError).message).toContain('no stored item "msg_private_turn" of this API key');
    expect(await other.responses.delete(created.id).catch((caught: unknown) => caught)).toBeInstanceOf(NotFoundError);
    // The owner still has it all.
    expect((await owner.responses.retrieve(created.id)).id).toBe(created.id);
    expect((await owner.responses.create({ model: 'mini', previous_response_id: created.id, input: 'next' })).status).toBe('completed');
  }, 60_000);

  it('meters reads as requests: retrieve, input_items, delete and count_tokens count against the key\'s rate, and a suspended account gets its 403', async () => {
    const { accountId } = await harness.paidKey(100_000_000);
    const limited = await call<{ key: string }>(`${harness.billing}/admin/v1/accounts/${accountId}/keys`, { token: harness.adminToken, body: { rpm: 4 } });
    const openai = client(limited.body.key);
    const created = await openai.responses.create({ model: 'mini', input: 'count me' });
    // The create was the minute's first request; three reads make four; the fifth of any kind is refused.
    expect((await openai.responses.retrieve(created.id)).id).toBe(created.id);
    expect((await openai.responses.inputItems.list(created.id)).data).toHaveLength(1);
    const counted = await call<{ input_tokens: number }>(`${harness.gateway}/v1/messages/count_tokens`, {
      token: limited.body.key,
      body: { model: 'mini', messages: [{ role: 'user', content: 'count these tokens' }] },
    });
    expect(counted.status).toBe(200);
    const refused = await openai.responses.retrieve(created.id).catch((caught: unknown) => caught);
    expect((refused as { status?: number }).status).toBe(429);
    const refusedCount = await call(`${harness.gateway}/v1/messages/count_tokens`, { token: limited.body.key, body: { model: 'mini', messages: [{ role: 'user', content: 'x' }] } });
    expect(refusedCount.status).toBe(429);

    const { accountId: suspendedAccount, key } = await harness.paidKey(100_000_000);
    const kept = await client(key).responses.create({ model: 'mini', input: 'before suspension' });
    expect((await call(`${harness.billing}/admin/v1/accounts/${suspendedAccount}`, { method: 'PATCH', token: harness.adminToken, body: { status: 'suspended' } })).status).toBe(200);
    await eventually(async () => (await client(key).responses.retrieve(kept.id).catch((caught: unknown) => caught)) instanceof PermissionDeniedError, 30_000, 250);
    expect(await client(key).responses.delete(kept.id).catch((caught: unknown) => caught)).toBeInstanceOf(PermissionDeniedError);
  }, 90_000);

  it('bounds count_tokens: more than 4 MiB of text is a 400, and large counts take at most the token workers, the rest a 429 with retry-after', async () => {
    const { key } = await harness.paidKey(1_000);
    const count = (text: string) => call<{ input_tokens?: number; error?: { message: string } }>(`${harness.gateway}/v1/messages/count_tokens`, { token: key, body: { model: 'claude', messages: [{ role: 'user', content: text }] } });
    const huge = await count('word '.repeat(1_000_000));
    expect(huge.status).toBe(400);
    expect(JSON.stringify(huge.body)).toContain('count_tokens counts at most 4194304 bytes of text');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => count(`${index} ${'many words '.repeat(300_000)}`)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(statuses).toContain(200);
    expect(statuses).toContain(429);
    expect(answers.find((answer) => answer.status === 429)!.headers.get('retry-after')).toBe('1');
    expect(answers.find((answer) => answer.status === 200)!.body.input_tokens).toBeGreaterThan(600_000);
  }, 60_000);
});

describe('A per-account quota of stored responses', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-store-catalogue.yaml'), RESPONSES_MAX_PER_ACCOUNT: '2', ...emulatedProviders(emulator.url) });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('answers the first response past it unkept (store: false), refuses storing requests after it with a 403, and lifts at a deletion', async () => {
    const { key } = await harness.paidKey(100_000_000);
    const openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
    const first = await openai.responses.create({ model: 'mini', input: 'one' });
    await openai.responses.create({ model: 'mini', input: 'two' });
    // Billing refuses the third save: the answer (paid for) still comes, saying it was not kept.
    const third = await openai.responses.create({ model: 'mini', input: 'three' });
    expect((third as { store?: boolean }).store).toBe(false);
    expect(await openai.responses.retrieve(third.id).catch((caught: unknown) => caught)).toBeInstanceOf(NotFoundError);
    // From then on a storing request is refused before it is paid for; store: false is still served.
    const refused = await openai.responses.create({ model: 'mini', input: 'four' }).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    expect((refused as PermissionDeniedError).message).toContain('Forbidden: this account keeps as many stored responses as it may (at most 2 responses');
    expect((await openai.responses.create({ model: 'mini', input: 'five', store: false })).status).toBe('completed');
    // A deletion makes room.
    await openai.responses.delete(first.id);
    const kept = await openai.responses.create({ model: 'mini', input: 'six' });
    expect((await openai.responses.retrieve(kept.id)).id).toBe(kept.id);
  }, 60_000);
});
