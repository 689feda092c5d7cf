import type { INestApplication } from '@nestjs/common';
import { packJson, unpackJson, type ConversationItems, type ResponsesItem } from '@igw/contracts';
import { QueueName, MessagingService, RpcFailedError, type QueueBackendOptions } from '@igw/messaging';
import type { ScratchDatabase } from '@igw/persistence';
import { loadEnvironment } from '@igw/config';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startBilling } from '../billing.app';
import { StoredResponsesService } from './stored-responses.service';

const ADMIN_TOKEN = 'integration-admin-token-0123456789';
const DAY_MS = 86_400_000;
/** The keys that save: stored responses belong to one unless the account's keys share them. */
const KEY = '00000000-0000-4000-8000-00000000000a';
const SIBLING_KEY = '00000000-0000-4000-8000-00000000000b';

/** Billing's side of stored Responses API responses, over its real queue and PostgreSQL: what the gateway asks, and the purge. */
describe('stored responses in billing', () => {
  let database: ScratchDatabase;
  let app: INestApplication;
  let gateway: MessagingService;
  let queue: QueueBackendOptions;
  let accountId: string;
  let otherAccountId: string;
  let newAccount: () => Promise<string>;

  const newId = () => `resp_${randomBytes(16).toString('hex')}`;
  const message = (id: string, role: string, text: string): ResponsesItem => ({ id, type: 'message', role, content: text });

  /** Saves a one-message turn and its one-message answer as the gateway does. */
  async function save(account: string, previousResponseId: string | null, text: string, createdAt = Date.now(), keyId = KEY) {
    const id = newId();
    const input = [message(`msg_in_${id}`, 'user', text)];
    const response = { id, object: 'response', created_at: Math.floor(createdAt / 1000), status: 'completed', output: [message(`msg_out_${id}`, 'assistant', `re: ${text}`)] };
    await gateway.request(QueueName.ResponsesRpc, 'responses.save', { accountId: account, keyId, id, previousResponseId, createdAt: response.created_at, content: await packJson({ input, response }) });
    return id;
  }

  /** Saves a response of these input items and no output; billing's reply and the response's id. */
  async function saveInput(account: string, input: ResponsesItem[]) {
    const id = newId();
    const reply = await gateway.request(QueueName.ResponsesRpc, 'responses.save', {
      accountId: account,
      keyId: KEY,
      id,
      previousResponseId: null,
      createdAt: Math.floor(Date.now() / 1000),
      content: await packJson({ input, response: { id, output: [] } }),
    });
    return { reply, id };
  }

  async function conversation(account: string, previousResponseId: string, maxBytes = 1_000_000, itemIds: string[] = []) {
    const reply = await gateway.request(QueueName.ResponsesRpc, 'responses.conversation', { accountId: account, previousResponseId, itemIds, maxBytes });
    return { ...reply, found: reply.packed ? await unpackJson<ConversationItems>(reply.packed, 10_000_000) : null };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = testQueueBackend(database.url);
    const { env, providers } = loadEnvironment({ BILLING_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN, RESPONSES_RETENTION_DAYS: '30', RESPONSES_MAX_PER_ACCOUNT: '40', RESPONSES_MAX_MB_PER_ACCOUNT: '1' });
    app = await startBilling({ env, providers, databaseUrl: database.url, adminToken: ADMIN_TOKEN, queue });
    gateway = new MessagingService({ serviceName: 'test-gateway', backend: queue });
    const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const account = async () =>
      ((await (await fetch(`${baseUrl}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ credits: 1, plan: 'paid' }) })).json()) as { id: string }).id;
    newAccount = account;
    accountId = await account();
    otherAccountId = await account();
  });

  afterAll(async () => {
    await gateway?.onApplicationShutdown();
    await app?.close();
    await dropQueueData(queue);
    await database?.drop();
  });

  it('hands back a chain of turns oldest first, only to its account, and held to the byte bound', async () => {
    const first = await save(accountId, null, 'one');
    const second = await save(accountId, first, 'two');
    const third = await save(accountId, second, 'three');
    const reply = await conversation(accountId, third);
    expect(reply.found!.items.map((item) => item.content)).toEqual(['one', 're: one', 'two', 're: two', 'three', 're: three']);
    expect(await conversation(otherAccountId, third)).toMatchObject({ previousFound: false, packed: null });
    const sizes = await queryRows<{ id: string; items_bytes: number }>(database.url, 'SELECT id, items_bytes FROM billing.responses WHERE id = ANY($1)', [[first, second, third]]);
    const twoTurns = sizes.filter((row) => row.id !== third).reduce((sum, row) => sum + row.items_bytes, 0);
    expect(twoTurns).toBeGreaterThan(200);
    // Exactly two turns' bytes hold two turns, not three.
    expect((await conversation(accountId, second, twoTurns)).found!.items).toHaveLength(4);
    expect(await conversation(accountId, second, twoTurns - 1)).toMatchObject({ previousFound: true, tooLarge: true, packed: null });
    expect(await conversation(accountId, third, twoTurns)).toMatchObject({ previousFound: true, tooLarge: true, packed: null });
  });

  it('ends a chain at a deleted turn, and finds referenced items of the account only', async () => {
    const first = await save(accountId, null, 'alpha');
    const second = await save(accountId, first, 'beta');
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.delete', { accountId: otherAccountId, id: first })).toEqual({ deleted: false });
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.delete', { accountId, id: first })).toEqual({ deleted: true });
    expect((await conversation(accountId, second)).found!.items.map((item) => item.content)).toEqual(['beta', 're: beta']);
    const references = await conversation(accountId, second, 1_000_000, [`msg_out_${second}`, `msg_out_${first}`, 'msg_unknown']);
    expect(Object.keys(references.found!.referenced)).toEqual([`msg_out_${second}`]);
    const strangers = await gateway.request(QueueName.ResponsesRpc, 'responses.conversation', { accountId: otherAccountId, itemIds: [`msg_out_${second}`], maxBytes: 1_000_000 });
    expect((await unpackJson<ConversationItems>(strangers.packed!, 1_000_000)).referenced).toEqual({});
    const noAccount = await gateway.request(QueueName.ResponsesRpc, 'responses.conversation', { accountId: 'not-a-uuid', itemIds: [`msg_out_${second}`], maxBytes: 1_000_000 });
    expect(await unpackJson<ConversationItems>(noAccount.packed!, 1_000_000)).toEqual({ items: [], referenced: {} });
    expect(await conversation('not-a-uuid', second)).toMatchObject({ previousFound: false, packed: null });
  });

  it("keeps a key's responses its own when asked by key: reads, chains, references and deletes see no sibling's", async () => {
    const mine = await save(accountId, null, 'mine');
    const theirs = await save(accountId, null, 'theirs', Date.now(), SIBLING_KEY);
    const asKey = (keyId: string) => ({ accountId, keyId });
    // The sibling's response and items are unknown to the key, as another account's are...
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.get', { ...asKey(KEY), id: theirs })).toEqual({ response: null });
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.conversation', { ...asKey(KEY), previousResponseId: theirs, itemIds: [], maxBytes: 1_000_000 })).toMatchObject({ previousFound: false });
    const referenced = await gateway.request(QueueName.ResponsesRpc, 'responses.conversation', { ...asKey(KEY), itemIds: [`msg_out_${theirs}`, `msg_out_${mine}`], maxBytes: 1_000_000 });
    expect(Object.keys((await unpackJson<ConversationItems>(referenced.packed!, 1_000_000)).referenced)).toEqual([`msg_out_${mine}`]);
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.delete', { ...asKey(KEY), id: theirs })).toEqual({ deleted: false });
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.inputItems', { ...asKey(KEY), id: theirs, limit: 20, order: 'desc' })).toMatchObject({ found: false });
    // ...while its own are found, and the account-wide question (keys shared) sees both.
    expect((await gateway.request(QueueName.ResponsesRpc, 'responses.get', { ...asKey(SIBLING_KEY), id: theirs })).response).not.toBeNull();
    expect((await gateway.request(QueueName.ResponsesRpc, 'responses.get', { accountId, id: theirs })).response).not.toBeNull();
    expect((await gateway.request(QueueName.ResponsesRpc, 'responses.get', { accountId, id: mine })).response).not.toBeNull();
  });

  it('refuses referenced items whose bytes together pass maxBytes without loading them', async () => {
    const first = await save(accountId, null, 'x'.repeat(3_000));
    const second = await save(accountId, null, 'y'.repeat(3_000));
    const both = [`msg_in_${first}`, `msg_in_${second}`];
    const ask = (maxBytes: number) => gateway.request(QueueName.ResponsesRpc, 'responses.conversation', { accountId, keyId: KEY, itemIds: both, maxBytes });
    expect(await ask(5_000)).toEqual({ previousFound: true, tooLarge: true, packed: null });
    const fits = await ask(10_000);
    expect(Object.keys((await unpackJson<ConversationItems>(fits.packed!, 1_000_000)).referenced).sort()).toEqual([...both].sort());
  });

  it("keeps a conversation of more items than one INSERT's parameters allow", async () => {
    const input = Array.from({ length: 12_000 }, (_, index) => message(`msg_many_${index}`, 'user', `${index}`));
    const { reply, id } = await saveInput(await newAccount(), input);
    expect(reply).toEqual({ saved: true });
    expect(await queryRows(database.url, 'SELECT count(*)::integer AS n, max(position) AS last FROM billing.response_items WHERE response_id = $1', [id])).toEqual([{ n: 12_000, last: 11_999 }]);
  });

  it("refuses a save past the account's quota of responses or of bytes, keeping nothing of it", async () => {
    const full = await newAccount();
    for (let index = 0; index < 40; index++) await save(full, null, `turn ${index}`);
    const { reply: past, id: refusedId } = await saveInput(full, [message('msg_x', 'user', 'one too many')]);
    expect(past).toEqual({ saved: false, reason: 'quota', maxResponses: 40, maxMegabytes: 1 });
    expect(await queryRows(database.url, 'SELECT id FROM billing.responses WHERE id = $1', [refusedId])).toEqual([]);
    // A megabyte of items: a turn of 800 KB (400 KB in, its 400 KB echo out) fits, 300 KB more do not.
    const heavy = await newAccount();
    await save(heavy, null, 'x'.repeat(400_000));
    expect(await queryRows(database.url, 'SELECT count(*)::integer AS n FROM billing.responses WHERE account_id = $1', [heavy])).toEqual([{ n: 1 }]);
    const { reply: tooMuch } = await saveInput(heavy, [message('msg_y', 'user', 'y'.repeat(300_000))]);
    expect(tooMuch).toMatchObject({ saved: false, reason: 'quota' });
  });

  it('refuses a save that is not one (the queue is a trust boundary) and keeps a save delivered twice once', async () => {
    const content = await packJson({ input: [], response: { id: 'x', output: [] } });
    for (const job of [
      { accountId, keyId: KEY, id: 'resp_notours', previousResponseId: null, createdAt: 1, content },
      { accountId, keyId: 'not-a-uuid', id: newId(), previousResponseId: null, createdAt: 1, content },
      { accountId: 'not-a-uuid', keyId: KEY, id: newId(), previousResponseId: null, createdAt: 1, content },
      { accountId, keyId: KEY, id: newId(), previousResponseId: null, createdAt: 1, content: await packJson({ input: 'text', response: {} }) },
      { accountId, keyId: KEY, id: newId(), previousResponseId: null, createdAt: 1, content: { deflated: 'not deflate' } },
    ]) {
      await expect(gateway.request(QueueName.ResponsesRpc, 'responses.save', job)).rejects.toBeInstanceOf(RpcFailedError);
    }
    const id = newId();
    const once = { accountId, keyId: KEY, id, previousResponseId: null, createdAt: Math.floor(Date.now() / 1000), content: await packJson({ input: [message('msg_1', 'user', 'x')], response: { id, output: [] } }) };
    await gateway.request(QueueName.ResponsesRpc, 'responses.save', once);
    await gateway.request(QueueName.ResponsesRpc, 'responses.save', once);
    expect(await queryRows(database.url, 'SELECT position FROM billing.response_items WHERE response_id = $1', [id])).toEqual([{ position: 0 }]);
  });

  it('purges the responses past their retention with their items, and reads stop at the retention before the purge runs', async () => {
    const service = app.get(StoredResponsesService);
    const old = await save(accountId, null, 'old turn', Date.now() - 31 * DAY_MS);
    const recent = await save(accountId, old, 'recent turn', Date.now() - 29 * DAY_MS);
    // Expired already for every read, purged or not.
    expect(await gateway.request(QueueName.ResponsesRpc, 'responses.get', { accountId, id: old })).toEqual({ response: null });
    expect((await conversation(accountId, recent)).found!.items.map((item) => item.content)).toEqual(['recent turn', 're: recent turn']);

    const count = async (id: string) => Number((await queryRows<{ n: string }>(database.url, 'SELECT (SELECT count(*) FROM billing.responses WHERE id = $1) + (SELECT count(*) FROM billing.response_items WHERE response_id = $1) AS n', [id]))[0].n);
    expect(await count(old)).toBe(3);
    expect(await service.purgeExpired()).toBeGreaterThanOrEqual(1);
    expect([await count(old), await count(recent)]).toEqual([0, 3]);
    // Two days on, the recent one is past its 30 days too.
    expect(await service.purgeExpired(Date.now() + 2 * DAY_MS)).toBeGreaterThanOrEqual(1);
    expect(await count(recent)).toBe(0);
  });
});
