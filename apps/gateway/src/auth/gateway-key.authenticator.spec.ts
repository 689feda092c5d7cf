import type { ResolvedKey } from '@igw/contracts';
import type { TopicMap, MessagingService } from '@igw/messaging';
import { GatewayException, generateApiKey, hashApiKey } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { GatewayKeyAuthenticator } from './gateway-key.authenticator';

// Billing played by a fake queue whose answers the test hands out one by one, so an answer can
// be held while a broadcast arrives. The real queue is exercised by e2e/auth-*.e2e-spec.ts.

interface Question {
  keyHash: string;
  answer(key: ResolvedKey | null): void;
  fail(error: Error): void;
}

class FakeBilling {
  readonly questions: Question[] = [];
  private readonly listeners = new Map<string, (data: unknown) => void>();
  private readonly recovered: Array<() => void> = [];

  readonly messaging = {
    request: (_queue: string, _name: string, { keyHash }: { keyHash: string }) =>
      new Promise((resolve, reject) => this.questions.push({ keyHash, answer: (key) => resolve({ key }), fail: reject })),
    subscribe: async (topic: string, listener: (data: unknown) => void) => void this.listeners.set(topic, listener),
    onRelayRecovered: (listener: () => void) => void this.recovered.push(listener),
  } as unknown as MessagingService;

  broadcast<T extends keyof TopicMap>(topic: T, data: TopicMap[T]): void {
    this.listeners.get(topic)!(data);
  }

  relayRecovered(): void {
    for (const listener of this.recovered) listener();
  }
}

const ENV = {
  KEY_CACHE_TTL_MS: 60_000,
  RPC_TIMEOUT_MS: 5_000,
  KEY_LOOKUPS_IN_FLIGHT: 8,
  KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT: 2,
  KEY_LOOKUP_MISS_BURST: 5,
  KEY_LOOKUP_MISSES_PER_MINUTE: 60,
};

function resolvedKey(accountId: string, status: ResolvedKey['status'] = 'active'): ResolvedKey {
  return { keyId: `key-of-${accountId}`, accountId, plan: 'paid', status, limits: {}, balanceMicro: '1000', balanceVersion: 1, usageSpentMicro: '0' };
}

/** Lets pending promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));
/** A request's connection, as the key guard passes it. */
const from = (remoteAddress: string, forwardedFor?: string) => ({ socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } });
const client = from('10.0.0.1');

describe('GatewayKeyAuthenticator', () => {
  let billing: FakeBilling;
  let authenticator: GatewayKeyAuthenticator;
  let clock: number;

  async function startAuthenticator(env: Partial<typeof ENV> & { TRUSTED_PROXIES?: string } = {}) {
    billing = new FakeBilling();
    authenticator = new GatewayKeyAuthenticator(billing.messaging, { env: { ...ENV, ...env } } as unknown as ServiceSettings);
    await authenticator.onApplicationBootstrap();
  }

  beforeEach(async () => {
    clock = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
    await startAuthenticator();
  });

  afterEach(() => jest.restoreAllMocks());

  it('carries a budgeted key\'s rules and spend, taking newer spend broadcasts only, and keeps none of keys it never resolved', async () => {
    const { key } = generateApiKey();
    const pending = authenticator.authenticate(key, client);
    await settle();
    const budget = { limit: '5', unit: 'credits' as const, period: 'day' as const, limitMicro: '5000000' };
    billing.questions[0].answer({
      ...resolvedKey('a1'),
      rules: { budget, models: ['mini'] },
      keySpend: { keyId: 'key-of-a1', version: 3, periodStart: 86_400_000, spentMicro: '10', appliedMicro: '12' },
    });
    expect(await pending).toMatchObject({ rules: { budget, models: ['mini'] }, keySpend: { version: 3, spentMicro: 10n, appliedMicro: 12n } });
    billing.broadcast('billing.keys.spend.changed', { keyId: 'key-of-a1', version: 5, periodStart: 86_400_000, spentMicro: '20', appliedMicro: '22' });
    billing.broadcast('billing.keys.spend.changed', { keyId: 'key-of-a1', version: 4, periodStart: 86_400_000, spentMicro: '15', appliedMicro: '17' });
    expect((await authenticator.authenticate(key, client))?.keySpend).toEqual({ version: 5, periodStart: 86_400_000, spentMicro: 20n, appliedMicro: 22n });
    // A key this replica never resolved: its broadcasts are not kept (nothing would ever drop them).
    billing.broadcast('billing.keys.spend.changed', { keyId: 'someone-else', version: 1, periodStart: 0, spentMicro: '1', appliedMicro: '1' });
    expect((authenticator as unknown as { keySpends: Map<string, unknown> }).keySpends.has('someone-else')).toBe(false);
  });

  it("carries the key's response cache as billing worked it out, and none when billing sends none", async () => {
    const cached = generateApiKey().key;
    const pending = authenticator.authenticate(cached, client);
    await settle();
    const cache = { ttlSeconds: 600, maxTtlSeconds: 3_600, scope: 'key' as const };
    billing.questions[0].answer({ ...resolvedKey('a1'), cache });
    expect((await pending)?.cache).toEqual(cache);
    expect((await authenticator.authenticate(cached, client))?.cache).toEqual(cache);

    const plain = generateApiKey().key;
    const other = authenticator.authenticate(plain, client);
    await settle();
    billing.questions[1].answer(resolvedKey('a2'));
    expect((await other)?.cache).toBeUndefined();
  });

  /** Authenticates `key` with billing answering `key` found for `accountId`. */
  async function known(key: string, accountId: string) {
    const auth = authenticator.authenticate(key, client);
    await settle();
    billing.questions.at(-1)!.answer(resolvedKey(accountId));
    return auth;
  }

  it('refuses a key that cannot be ours without asking billing or remembering it', async () => {
    for (const key of ['igw_not-a-real-key', 'sk-abc', `${generateApiKey().key}x`, '']) {
      expect(await authenticator.authenticate(key, client)).toBeNull();
    }
    expect(billing.questions).toHaveLength(0);
    expect((authenticator as unknown as { lookUps: { unknown: { size: number } } }).lookUps.unknown.size).toBe(0);
  });

  it('a look-up answered after the key was revoked neither accepts nor caches the key', async () => {
    const { key } = generateApiKey();
    const auth = authenticator.authenticate(key, client);
    await settle();
    expect(billing.questions).toHaveLength(1);
    billing.broadcast('billing.keys.revoked', { keyId: 'k', keyHash: hashApiKey(key) });
    billing.questions[0].answer(resolvedKey('a'));
    expect(await auth).toBeNull();

    // Forgetting every unknown key (as after missed broadcasts) must send the key to billing again, not to a cache.
    billing.relayRecovered();
    const again = authenticator.authenticate(key, client);
    await settle();
    expect(billing.questions).toHaveLength(2);
    billing.questions[1].answer(null);
    expect(await again).toBeNull();
  });

  it('a look-up overtaken by an account change asks billing again and keeps only the newer answer', async () => {
    const { key } = generateApiKey();
    const auth = authenticator.authenticate(key, client);
    await settle();
    billing.broadcast('billing.account.changed', { accountId: 'a' });
    billing.questions[0].answer(resolvedKey('a', 'active'));
    await settle();
    expect(billing.questions).toHaveLength(2);
    billing.questions[1].answer(resolvedKey('a', 'suspended'));
    expect((await auth)?.status).toBe('suspended');
    expect((await authenticator.authenticate(key, client))?.status).toBe('suspended');
    expect(billing.questions).toHaveLength(2);
  });

  it('a "no such key" overtaken by the key\'s creation is asked again, not remembered', async () => {
    const { key } = generateApiKey();
    const auth = authenticator.authenticate(key, client);
    await settle();
    billing.broadcast('billing.keys.created', { keyHash: hashApiKey(key) });
    billing.questions[0].answer(null);
    await settle();
    expect(billing.questions).toHaveLength(2);
    billing.questions[1].answer(resolvedKey('a'));
    expect((await auth)?.accountId).toBe('a');
  });

  it('fails closed: an entry past its TTL is not used while billing is not answering', async () => {
    const { key } = generateApiKey();
    expect((await known(key, 'a'))?.accountId).toBe('a');

    clock += ENV.KEY_CACHE_TTL_MS + 1;
    const auth = authenticator.authenticate(key, client);
    await settle();
    billing.questions[1].fail(new Error('rpc timed out'));
    const error = await auth.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(GatewayException);
    expect((error as GatewayException).getStatus()).toBe(503);
  });

  it('keeps serving an entry within its TTL when a re-check cannot reach billing, unless it was revoked meanwhile', async () => {
    const { key } = generateApiKey();
    await known(key, 'a');
    billing.relayRecovered();
    const auth = authenticator.authenticate(key, client);
    await settle();
    billing.questions[1].fail(new Error('rpc timed out'));
    expect((await auth)?.accountId).toBe('a');

    const revokedMeanwhile = authenticator.authenticate(key, client);
    await settle();
    billing.broadcast('billing.keys.revoked', { keyId: 'k', keyHash: hashApiKey(key) });
    billing.questions[2].fail(new Error('rpc timed out'));
    await expect(revokedMeanwhile).rejects.toMatchObject({ status: 503 });
    expect(await authenticator.authenticate(key, client)).toBeNull();
  });

  it('answers 429 with retry-after to a client over its budget of unknown keys, while another client is served', async () => {
    for (let i = 0; i < ENV.KEY_LOOKUP_MISS_BURST; i++) {
      const auth = authenticator.authenticate(generateApiKey().key, from('10.0.0.1'));
      await settle();
      billing.questions.at(-1)!.answer(null);
      expect(await auth).toBeNull();
    }
    const refused = await authenticator.authenticate(generateApiKey().key, from('10.0.0.1')).catch((error: GatewayException) => error);
    expect(refused).toBeInstanceOf(GatewayException);
    expect((refused as GatewayException).getStatus()).toBe(429);
    expect((refused as GatewayException).headers['retry-after']).toBe('1');
    expect(billing.questions).toHaveLength(ENV.KEY_LOOKUP_MISS_BURST);

    const other = authenticator.authenticate(generateApiKey().key, from('10.0.0.2'));
    await settle();
    billing.questions.at(-1)!.answer(resolvedKey('b'));
    expect((await other)?.accountId).toBe('b');
  });

  it('budgets clients behind TRUSTED_PROXIES by the address X-Forwarded-For names, not the proxy\'s', async () => {
    await startAuthenticator({ TRUSTED_PROXIES: '10.0.0.0/8' });
    const viaIngress = (clientAddress: string) => from('10.9.9.9', `${clientAddress}`);
    for (let i = 0; i < ENV.KEY_LOOKUP_MISS_BURST; i++) {
      const auth = authenticator.authenticate(generateApiKey().key, viaIngress('203.0.113.1'));
      await settle();
      billing.questions.at(-1)!.answer(null);
      expect(await auth).toBeNull();
    }
    await expect(authenticator.authenticate(generateApiKey().key, viaIngress('203.0.113.1'))).rejects.toMatchObject({ status: 429 });
    // Another client behind the same ingress keeps its own budget; a forged left part changes nothing.
    const other = authenticator.authenticate(generateApiKey().key, from('10.9.9.9', '203.0.113.1, 198.51.100.2'));
    await settle();
    billing.questions.at(-1)!.answer(resolvedKey('b'));
    expect((await other)?.accountId).toBe('b');
  });

  it('never lets one client hold more look-ups at billing than its share', async () => {
    const pending = Array.from({ length: ENV.KEY_LOOKUP_MISS_BURST }, () => authenticator.authenticate(generateApiKey().key, from('10.0.0.1')));
    await settle();
    expect(billing.questions).toHaveLength(ENV.KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT);
    const other = authenticator.authenticate(generateApiKey().key, from('10.0.0.2'));
    await settle();
    expect(billing.questions).toHaveLength(ENV.KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT + 1);
    billing.questions.at(-1)!.answer(resolvedKey('b'));
    expect((await other)?.accountId).toBe('b');

    const answered = new Set<Question>(billing.questions.slice(-1));
    while (answered.size < ENV.KEY_LOOKUP_MISS_BURST + 1) {
      for (const question of billing.questions.filter((q) => !answered.has(q))) {
        answered.add(question);
        question.answer(null);
      }
      await settle();
    }
    expect(await Promise.all(pending)).toEqual(pending.map(() => null));
  });

  it('a look-up that waited its turn as long as billing is given: 429 behind its own client\'s look-ups, 503 behind others\'', async () => {
    await startAuthenticator({ RPC_TIMEOUT_MS: 50, KEY_LOOKUPS_IN_FLIGHT: 3, KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT: 2 });
    const held = [0, 1].map(() => authenticator.authenticate(generateApiKey().key, from('10.0.0.1')));
    const behindItsOwn = authenticator.authenticate(generateApiKey().key, from('10.0.0.1'));
    const other = authenticator.authenticate(generateApiKey().key, from('10.0.0.2'));
    const behindOthers = authenticator.authenticate(generateApiKey().key, from('10.0.0.3'));
    await expect(behindItsOwn).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '1' } });
    await expect(behindOthers).rejects.toMatchObject({ status: 503 });
    expect(billing.questions).toHaveLength(3);
    for (const question of billing.questions) question.answer(null);
    expect(await Promise.all([...held, other])).toEqual([null, null, null]);
  });
});
