import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { CatalogueModel, AuthenticatedKey } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { loadEnvironment, SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { InMemoryLimitStore } from './in-memory-limit-store';
import { LIMIT_STORE, limitStoreProvider } from './limit-store.provider';
import type { Admission, AdmissionResult, Departure, LimitStore, Renewal } from './limit-store.types';
import type { PaidCall } from '../paid-requests/admitted-request';
import { RequestAdmission, RequestHold, RunningRequests } from './request-admission';

const model: CatalogueModel = {
  id: 'test/mini',
  aliases: [],
  type: 'openai/chat-completions',
  info: { name: 'Mini', developer: 'Test', description: '', contextLength: 100_000, outputMax: 4_000 },
  tags: [],
  pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'output_tokens', price: 1, per: 1_000 }] },
  routing: { sources: [{ provider: 'openai', model: 'mini' }] },
};
const auth: AuthenticatedKey = {
  keyId: 'k1',
  accountId: 'a1',
  plan: 'paid',
  status: 'active',
  limits: {},
  balance: { balanceMicro: 10n ** 15n, version: 1, usageSpentMicro: 0n },
};
let requestCount = 0;
const call = (): PaidCall => ({ requestId: `req-${++requestCount}`, auth, endpoint: 'chat.completions', model, catalogueRevision: 1 });

/** A LimitStore that answers what it is told and remembers what it was asked. */
class ScriptedStore implements LimitStore {
  readonly reachable = true;
  readonly admissions: Admission[] = [];
  readonly departures: Departure[] = [];
  closed = false;
  constructor(private readonly answer: AdmissionResult) {}
  async admit(admission: Admission): Promise<AdmissionResult> {
    this.admissions.push(admission);
    return this.answer;
  }
  finish(departure: Departure): void {
    this.departures.push(departure);
  }
  readonly renewals: Array<{ slotId: string; ttlMs: number; now: number }> = [];
  renew(renewal: Renewal, now: number): void {
    this.renewals.push({ slotId: renewal.slotId, ttlMs: renewal.ttlMs, now });
  }
  async available(): Promise<bigint | undefined> {
    return undefined;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** The HTTP status and headers of what `admission` was refused with. */
const refusal = (admission: Promise<unknown>) =>
  admission.then(
    () => ({ admitted: true }),
    (error: unknown) => (error instanceof GatewayException ? { status: error.getStatus(), headers: error.headers } : { error }),
  );

/** Admission as the core module provides it, with `store` in place of the configured one when given. */
async function admissionContext(environment: NodeJS.ProcessEnv, store?: LimitStore) {
  const settings = { env: loadEnvironment(environment).env, providers: {}, queue: { kind: 'postgres', url: 'unused', schema: 'unused' } } as ServiceSettings;
  const providers: Provider[] = [
    { provide: SERVICE_SETTINGS, useValue: settings },
    store ? { provide: LIMIT_STORE, useValue: store } : limitStoreProvider,
    RequestAdmission,
  ];
  @Module({})
  class AdmissionModule {
    static with(): DynamicModule {
      return { module: AdmissionModule, providers };
    }
  }
  const context = await NestFactory.createApplicationContext(AdmissionModule.with(), { logger: false });
  return { context, admission: context.get(RequestAdmission) };
}

describe('RequestAdmission and its LIMIT_STORE', () => {
  it('counts in the process without REDIS_URL', async () => {
    const { context, admission } = await admissionContext({ RATE_LIMIT_CONCURRENCY: '1' });
    try {
      expect(context.get(LIMIT_STORE)).toBeInstanceOf(InMemoryLimitStore);
      const first = await admission.admit(call(), { output_tokens: 10 });
      expect(await refusal(admission.admit(call(), { output_tokens: 10 }))).toMatchObject({ status: 429 });
      first.release();
      expect(await admission.admit(call(), { output_tokens: 10 })).toBeDefined();
    } finally {
      await context.close();
    }
  });

  it('admits, refuses and gives back through the store it is given, once, and closes it', async () => {
    const store = new ScriptedStore({ allowed: true });
    const { context, admission } = await admissionContext({}, store);
    const hold = await admission.admit(call(), { output_tokens: 1_000 });
    const [asked] = store.admissions;
    expect(asked).toMatchObject({ perMinute: { key: 'key:k1:minute' }, concurrency: { key: 'key:k1:running' }, credits: { accountId: 'a1' } });
    hold.spend(asked.credits!.amountMicro / 5n);
    hold.release();
    hold.release();
    expect(store.departures).toEqual([
      {
        concurrencyKey: 'key:k1:running',
        slotId: asked.concurrency.slotId,
        credits: { accountId: 'a1', holdId: asked.concurrency.slotId, amountMicro: asked.credits!.amountMicro, spentMicro: asked.credits!.amountMicro / 5n },
      },
    ]);
    await context.close();
    expect(store.closed).toBe(true);
  });

  it('asks the store for the key\'s rules: the lower rates, the budget held with the same hold, and refuses other models before asking', async () => {
    const store = new ScriptedStore({ allowed: true });
    const { context, admission } = await admissionContext({ RATE_LIMIT_RPM: '100', RATE_LIMIT_CONCURRENCY: '3' }, store);
    try {
      const keySpend = { version: 4, periodStart: Date.UTC(2026, 0, 1), spentMicro: 7n, appliedMicro: 9n };
      const ruled: AuthenticatedKey = {
        ...auth,
        rules: { requestsPerMinute: 10, concurrentRequests: 50, models: ['test/*'], budget: { limit: '2', unit: 'credits', period: 'month', limitMicro: '2000000' } },
        keySpend,
      };
      const hold = await admission.admit({ ...call(), auth: ruled }, { output_tokens: 1 });
      const [asked] = store.admissions;
      const monthStart = new Date();
      monthStart.setUTCDate(1);
      monthStart.setUTCHours(0, 0, 0, 0);
      expect(asked.perMinute.limit).toBe(10);
      expect(asked.concurrency.limit).toBe(3);
      expect(asked.credits!.keyBudget).toEqual({ keyId: 'k1', limitMicro: 2_000_000n, periodStart: monthStart.getTime(), snapshot: keySpend });
      hold.release();
      expect(store.departures[0].credits).toMatchObject({ keyId: 'k1', holdId: asked.credits!.holdId });

      const other = { ...call(), auth: { ...ruled, rules: { models: ['anthropic/*'] } } };
      const refused = await admission.admit(other, {}).catch((error: GatewayException) => error);
      expect(refused).toBeInstanceOf(GatewayException);
      expect((refused as GatewayException).getStatus()).toBe(403);
      expect((refused as GatewayException).message).toBe("Forbidden: this API key may not call model 'test/mini' (the key's model rule allows: anthropic/*).");
      expect(store.admissions).toHaveLength(1);
      // A floating id the client named allows its pinned release, as an alias would.
      const floating = { ...model, id: 'test/floating', resolvesTo: 'test/mini' };
      const pinnedCall = { ...call(), auth: { ...ruled, rules: { models: ['test/floating'] } }, namedModel: floating };
      (await admission.admit(pinnedCall, {})).release();
      expect(store.admissions).toHaveLength(2);
    } finally {
      await context.close();
    }
  });

  it('turns the store\'s refusal into the 429 with retry-after, or the 403 for credits', async () => {
    const busy = await admissionContext({}, new ScriptedStore({ allowed: false, reason: 'per-minute', retryAfterSeconds: 17 }));
    expect(await refusal(busy.admission.admit(call(), {}))).toEqual({ status: 429, headers: { 'retry-after': '17' } });
    await busy.context.close();
    const broke = await admissionContext({}, new ScriptedStore({ allowed: false, reason: 'credits', retryAfterSeconds: 0 }));
    expect(await refusal(broke.admission.admit(call(), {}))).toEqual({ status: 403, headers: {} });
    await broke.context.close();
  });

  it('renews a running hold every third of the lapse until it is released', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const running = new RunningRequests(3_000);
    try {
      const store = new ScriptedStore({ allowed: true });
      const hold = new RequestHold(store, 'key:k1:running', { accountId: 'a1', holdId: 'req-renewed', amountMicro: 5n }, running);
      jest.advanceTimersByTime(999);
      expect(store.renewals).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(store.renewals).toEqual([{ slotId: 'req-renewed', ttlMs: 3_000, now: 1_001_000 }]);
      jest.advanceTimersByTime(2_000);
      expect(store.renewals.map(({ now }) => now)).toEqual([1_001_000, 1_002_000, 1_003_000]);
      hold.release();
      jest.advanceTimersByTime(3_000);
      expect(store.renewals).toHaveLength(3);
    } finally {
      running.close();
      jest.useRealTimers();
    }
  });
});
