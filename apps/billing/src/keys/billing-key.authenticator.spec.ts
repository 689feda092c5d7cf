import type { ResolvedKey } from '@igw/contracts';
import type { MessagingService } from '@igw/messaging';
import { generateApiKey, hashApiKey } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { BillingKeyAuthenticator } from './billing-key.authenticator';
import type { KeysService } from './keys.service';

// The keys table played by a map whose look-ups are counted: each one is a query on the real service.

const ENV = {
  RPC_TIMEOUT_MS: 5_000,
  KEY_CACHE_TTL_MS: 60_000,
  KEY_LOOKUPS_IN_FLIGHT: 8,
  KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT: 2,
  KEY_LOOKUP_MISS_BURST: 5,
  KEY_LOOKUP_MISSES_PER_MINUTE: 60,
  TRUSTED_PROXIES: '10.0.0.0/8',
};

const resolvedKey: ResolvedKey = { keyId: 'key-1', accountId: 'account-1', plan: 'paid', status: 'active', limits: {}, balanceMicro: '1000', balanceVersion: 1, usageSpentMicro: '0' };
const from = (client: string) => ({ socket: { remoteAddress: '10.0.0.1' }, headers: { 'x-forwarded-for': client } });

describe('BillingKeyAuthenticator', () => {
  let queries: string[];
  let stored: Map<string, ResolvedKey>;
  let onCreated: (data: { keyHash: string }) => void;
  let authenticator: BillingKeyAuthenticator;

  beforeEach(async () => {
    queries = [];
    stored = new Map();
    const keys = {
      resolve: async (keyHash: string) => {
        queries.push(keyHash);
        return stored.get(keyHash) ?? null;
      },
    } as unknown as KeysService;
    const messaging = {
      subscribe: async (_topic: string, listener: (data: { keyHash: string }) => void) => void (onCreated = listener),
      onRelayRecovered: () => undefined,
    } as unknown as MessagingService;
    authenticator = new BillingKeyAuthenticator(keys, messaging, { env: ENV } as unknown as ServiceSettings);
    await authenticator.onApplicationBootstrap();
  });

  it('queries at most the budget of made-up keys from one address, then answers 429', async () => {
    const outcomes: string[] = [];
    for (let index = 0; index < 300; index++) {
      await authenticator.authenticate(generateApiKey().key, from('203.0.113.7')).then(
        (auth) => outcomes.push(auth ? 'accepted' : 'unknown'),
        (error: { status?: number }) => outcomes.push(String(error.status)),
      );
    }
    expect(queries).toHaveLength(ENV.KEY_LOOKUP_MISS_BURST);
    expect(outcomes.filter((outcome) => outcome === 'unknown')).toHaveLength(ENV.KEY_LOOKUP_MISS_BURST);
    expect(outcomes.filter((outcome) => outcome === '429')).toHaveLength(300 - ENV.KEY_LOOKUP_MISS_BURST);
  });

  it('serves a real key from another address meanwhile, and gives a found key its budget back', async () => {
    for (let index = 0; index < 20; index++) await authenticator.authenticate(generateApiKey().key, from('203.0.113.7')).catch(() => undefined);
    const { key } = generateApiKey();
    stored.set(hashApiKey(key), resolvedKey);
    for (let index = 0; index < 20; index++) expect(await authenticator.authenticate(key, from('198.51.100.9'))).toMatchObject({ accountId: 'account-1' });
  });

  it('serves a key in use from an address whose budget made-up keys spent, asking the table every time', async () => {
    const { key } = generateApiKey();
    stored.set(hashApiKey(key), resolvedKey);
    expect(await authenticator.authenticate(key, from('203.0.113.7'))).toMatchObject({ keyId: 'key-1' });
    for (let index = 0; index < 20; index++) await authenticator.authenticate(generateApiKey().key, from('203.0.113.7')).catch(() => undefined);
    const before = queries.length;
    for (let index = 0; index < 5; index++) expect(await authenticator.authenticate(key, from('203.0.113.7'))).toMatchObject({ keyId: 'key-1' });
    expect(queries.length).toBe(before + 5);
    // Revoked: the table says so at once.
    stored.delete(hashApiKey(key));
    expect(await authenticator.authenticate(key, from('203.0.113.7'))).toBeNull();
  });

  it('remembers an unknown key without asking again, until the key is created', async () => {
    const { key } = generateApiKey();
    expect(await authenticator.authenticate(key, from('203.0.113.7'))).toBeNull();
    expect(await authenticator.authenticate(key, from('203.0.113.7'))).toBeNull();
    expect(queries).toHaveLength(1);
    stored.set(hashApiKey(key), resolvedKey);
    onCreated({ keyHash: hashApiKey(key) });
    expect(await authenticator.authenticate(key, from('203.0.113.7'))).toMatchObject({ keyId: 'key-1' });
    expect(queries).toHaveLength(2);
  });

  it('asks nothing for a key that cannot be ours', async () => {
    expect(await authenticator.authenticate('igw_not-a-key', from('203.0.113.7'))).toBeNull();
    expect(queries).toHaveLength(0);
  });
});
