import { HttpStatus, Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ErrorMessages, type AuthenticatedKey, type KeyBudget } from '@igw/contracts';
import { modelAllowed, periodEndOf, periodStartOf, priceUsage } from '@igw/domain';
import { GatewayException } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import type { PaidCall } from '../paid-requests/admitted-request';
import { InMemoryLimitStore } from './in-memory-limit-store';
import { LIMIT_STORE } from './limit-store.provider';
import type { Admission, AdmissionResult, KeyBudgetHold, LimitStore } from './limit-store.types';

/**
 * A request's slot and hold are renewed this often per lapse (REQUEST_HOLD_LAPSE_MS): a
 * renewal or two may be lost (Redis briefly away) before they lapse under a running request.
 */
const RENEWALS_PER_LAPSE = 3;
/**
 * A request never finished (a bug) stops renewing after this long, so it cannot keep its
 * key's slot and its account's hold for ever; no request runs this long.
 */
const LONGEST_RENEWED_MS = 24 * 3_600_000;

/**
 * The holds of a replica's running requests, which one timer renews (a timer per request
 * would cost every request its creation and clearing, for the few that run long). A request
 * admitted just after a tick is renewed at the next: never later than a third of the lapse
 * after its admission or last renewal.
 */
export class RunningRequests {
  private readonly running = new Set<RequestHold>();
  private timer?: NodeJS.Timeout;

  constructor(readonly lapseMs: number) {}

  add(hold: RequestHold): void {
    this.running.add(hold);
    if (this.timer) return;
    this.timer = setInterval(() => this.renewAll(), Math.max(1, Math.floor(this.lapseMs / RENEWALS_PER_LAPSE)));
    this.timer.unref();
  }

  delete(hold: RequestHold): void {
    this.running.delete(hold);
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.running.clear();
  }

  private renewAll(): void {
    const now = Date.now();
    for (const hold of this.running) if (!hold.renew(now)) this.running.delete(hold);
    if (this.running.size === 0) this.close();
  }
}

/**
 * What an admitted request holds while it runs: its key's concurrency slot and its account's
 * credit hold, in the store that admitted it. `release` gives both back, once, counting what
 * was `spend`t as spent.
 */
export class RequestHold {
  private spentMicro = 0n;
  private released = false;
  private readonly admittedAt = Date.now();
  /** Holds taken after admission for the rest of the request's cost (RequestAdmission.holdRest), given back with the first. */
  private readonly added: Array<{ holdId: string; amountMicro: bigint }> = [];

  constructor(
    readonly store: LimitStore,
    private readonly concurrencyKey: string,
    private readonly credits: { accountId: string; holdId: string; amountMicro: bigint; keyId?: string },
    /** Renews the slot and hold until released; without, they live as long as the store was told at admission. */
    private readonly running?: RunningRequests,
    /** False for a request that holds no money (a look-up of what a key stored): only its slot is given back and renewed. */
    private readonly paid = true,
  ) {
    running?.add(this);
  }

  /** What is held in all, in micro-credits. */
  get heldMicro(): bigint {
    return this.added.reduce((sum, hold) => sum + hold.amountMicro, this.credits.amountMicro);
  }

  /** Counts a hold the store took for this request after its admission. */
  addHold(holdId: string, amountMicro: bigint): void {
    this.added.push({ holdId, amountMicro });
  }

  /** Credits charged to the request, counted as spent when the hold is released. */
  spend(creditsMicro: bigint): void {
    this.spentMicro += creditsMicro;
  }

  /**
   * A replica that dies leaves its requests' slots and holds to lapse; a request that lives
   * (a long stream) pushes their lapse on until it finishes, however long it runs. Returns
   * whether it still needs renewing.
   */
  renew(now: number): boolean {
    if (this.released || !this.running || now - this.admittedAt > LONGEST_RENEWED_MS) return false;
    const ttlMs = this.running.lapseMs;
    this.store.renew({ concurrencyKey: this.concurrencyKey, slotId: this.credits.holdId, credits: this.paid ? this.credits : undefined, ttlMs }, now);
    // An added hold's slot id names no slot: only its money is renewed.
    for (const { holdId, amountMicro } of this.added) this.store.renew({ concurrencyKey: this.concurrencyKey, slotId: holdId, credits: { ...this.credits, holdId, amountMicro }, ttlMs }, now);
    return true;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.running?.delete(this);
    this.store.finish({ concurrencyKey: this.concurrencyKey, slotId: this.credits.holdId, credits: this.paid ? { ...this.credits, spentMicro: this.spentMicro } : undefined });
    for (const { holdId, amountMicro } of this.added) {
      this.store.finish({ concurrencyKey: this.concurrencyKey, slotId: holdId, credits: { ...this.credits, holdId, amountMicro, spentMicro: 0n } });
    }
  }
}

/** A rate that applies to a key: its limit, and whether the key's own rule set it. */
type AppliedRate = { limit: number; byKey: boolean };

/** The account's limit, or the key's own when lower (`byKey`: the refusal then names the key's rule). */
function lowerOf(accountLimit: number, keyLimit: number | undefined): AppliedRate {
  return keyLimit !== undefined && keyLimit < accountLimit ? { limit: keyLimit, byKey: true } : { limit: accountLimit, byKey: false };
}

/** What the key's budget asks of the store, when it has one. */
function keyBudgetHold(auth: AuthenticatedKey, now: number): KeyBudgetHold | undefined {
  const budget = auth.rules?.budget;
  if (!budget) return undefined;
  return {
    keyId: auth.keyId,
    limitMicro: BigInt(budget.limitMicro),
    periodStart: periodStartOf(budget.period, new Date(now)).getTime(),
    // A key billing has not told about yet has spent nothing this store does not count itself.
    snapshot: auth.keySpend ?? { version: -1, periodStart: 0, spentMicro: 0n, appliedMicro: 0n },
  };
}

function modelRefused(modelId: string, allowed: readonly string[]): GatewayException {
  const listed = allowed.length === 0 ? 'none' : allowed.slice(0, 10).join(', ') + (allowed.length > 10 ? ', ...' : '');
  return new GatewayException(HttpStatus.FORBIDDEN, `Forbidden: this API key may not call model '${modelId}' (the key's model rule allows: ${listed}).`);
}

function budgetRefused(budget: KeyBudget, periodStart: number): GatewayException {
  const per = budget.period === 'lifetime' ? 'for its lifetime' : `per ${budget.period}`;
  const resetsAt = periodEndOf(budget.period, new Date(periodStart));
  const when = resetsAt ? `it resets at ${resetsAt.toISOString()}` : 'it never resets; an administrator can raise it';
  return new GatewayException(
    HttpStatus.FORBIDDEN,
    `Forbidden: this API key's budget of ${budget.limit} ${budget.unit === 'usd' ? 'USD' : 'credits'} ${per} is spent, or too little of it is left for this request's most expensive outcome; ${when}.`,
  );
}

/**
 * Admits paid requests: per API key, its model rule, requests per minute and requests in
 * flight, and its budget; per free account, requests per hour; per account, credits, holding
 * each request's most expensive outcome (against the key's budget too) while it runs. Over a rate limit: 429 with `retry-after`; nothing left to spend: 403.
 * Everything is checked and counted in one step in the LIMIT_STORE (see limit-store.provider.ts):
 * shared by every replica when REDIS_URL is set, kept in the process otherwise.
 */
@Injectable()
export class RequestAdmission implements OnApplicationShutdown {
  private readonly logger = new Logger(RequestAdmission.name);
  /** Every replica's own counters while the store is unreachable. */
  private readonly local = new InMemoryLimitStore();
  private readonly running: RunningRequests;
  private degraded = false;

  constructor(
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
    @Inject(LIMIT_STORE) private readonly store: LimitStore,
  ) {
    this.running = new RunningRequests(settings.env.REQUEST_HOLD_LAPSE_MS);
  }

  /**
   * Admits the request or throws the 403/429 that says why not. The most it can cost (its
   * `ceilingUnits` at the model's prices) is held until the hold is released.
   */
  async admit(call: PaidCall, ceilingUnits: Record<string, number>): Promise<RequestHold> {
    const { env } = this.settings;
    const { auth, requestId } = call;
    const rules = auth.rules;
    // A floating id stands for its pinned release as an alias does: allowing either allows the call.
    if (rules?.models && !modelAllowed(rules.models, call.model) && !(call.namedModel && modelAllowed(rules.models, call.namedModel))) {
      throw modelRefused(call.model.id, rules.models);
    }
    const costCeilingMicro = priceUsage(call.model.pricing, ceilingUnits, env.CREDITS_PER_USD).creditsMicro;
    const { perMinute, concurrent } = this.ratesOf(auth);
    const now = Date.now();
    const admission = this.admissionOf(auth, requestId, costCeilingMicro, now, perMinute.limit, concurrent.limit);
    const { store, result } = await this.admitSomewhere(admission);
    if (!result.allowed) {
      if (result.reason === 'credits' || result.reason === 'key-budget') throw this.moneyRefusal(result.reason, auth, now);
      this.refuseRate(result, perMinute, concurrent);
    }
    return new RequestHold(store, admission.concurrency.key, { accountId: auth.accountId, holdId: requestId, amountMicro: costCeilingMicro, keyId: admission.credits!.keyBudget?.keyId }, this.running);
  }

  /**
   * Admits a request that costs nothing but is work for the gateway and billing (reading,
   * listing or deleting a stored response): the key's requests per minute, the free plan's hour
   * and the key's requests in flight count it as they count a paid one; no money is held.
   */
  async admitUnpaid(auth: AuthenticatedKey, requestId: string): Promise<RequestHold> {
    const { perMinute, concurrent } = this.ratesOf(auth);
    const { credits: _money, ...admission } = this.admissionOf(auth, requestId, 0n, Date.now(), perMinute.limit, concurrent.limit);
    const { store, result } = await this.admitSomewhere(admission);
    if (!result.allowed) this.refuseRate(result, perMinute, concurrent);
    return new RequestHold(store, admission.concurrency.key, { accountId: auth.accountId, holdId: requestId, amountMicro: 0n }, this.running, false);
  }

  /**
   * The second step of a two-step admission: `first` was admitted on a first hold, before the
   * request's full cost could be known (a stored conversation is looked up after admission);
   * now the rest of `ceilingUnits`' cost is held the same way, in the same store, or the 403
   * that says it does not fit is thrown (the caller gives `first` back).
   */
  async holdRest(first: RequestHold, call: PaidCall, ceilingUnits: Record<string, number>): Promise<RequestHold> {
    const { env } = this.settings;
    const { auth, requestId } = call;
    const rest = priceUsage(call.model.pricing, ceilingUnits, env.CREDITS_PER_USD).creditsMicro - first.heldMicro;
    if (rest <= 0n) return first;
    const now = Date.now();
    const holdId = `${requestId}:rest`;
    const admission = { ...this.admissionOf(auth, holdId, rest, now, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER), holdOnly: true };
    const result = await first.store.admit(admission, now).catch((error: unknown) => {
      // The rest must be held where the first hold is; counting it elsewhere would free it twice or never.
      throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: credit holds cannot be taken right now. Retry shortly.', { cause: error });
    });
    if (!result.allowed) throw this.moneyRefusal(result.reason === 'key-budget' ? 'key-budget' : 'credits', auth, now);
    first.addHold(holdId, rest);
    return first;
  }

  /** The key's own rates apply within the account's: the lower of the two counts. */
  private ratesOf(auth: AuthenticatedKey): { perMinute: AppliedRate; concurrent: AppliedRate } {
    const { env } = this.settings;
    return {
      perMinute: lowerOf(auth.limits.requestsPerMinute ?? env.RATE_LIMIT_RPM, auth.rules?.requestsPerMinute),
      concurrent: lowerOf(auth.limits.concurrentRequests ?? env.RATE_LIMIT_CONCURRENCY, auth.rules?.concurrentRequests),
    };
  }

  private admissionOf(auth: AuthenticatedKey, holdId: string, amountMicro: bigint, now: number, perMinuteLimit: number, concurrencyLimit: number): Admission {
    const { env } = this.settings;
    const abandonedAfterMs = env.REQUEST_HOLD_LAPSE_MS;
    return {
      perMinute: { key: `key:${auth.keyId}:minute`, limit: perMinuteLimit },
      concurrency: { key: `key:${auth.keyId}:running`, limit: concurrencyLimit, ttlMs: abandonedAfterMs, slotId: holdId },
      freeHourly: auth.plan === 'free' ? { key: `account:${auth.accountId}:hour`, limit: env.FREE_TIER_HOURLY_LIMIT } : undefined,
      credits: { accountId: auth.accountId, snapshot: auth.balance, holdId, amountMicro, ttlMs: abandonedAfterMs, keyBudget: keyBudgetHold(auth, now) },
    };
  }

  /** The 429 for a refusal by a rate: the key's own rule named where it is the lower. */
  private refuseRate(result: Exclude<AdmissionResult, { allowed: true }>, perMinute: AppliedRate, concurrent: AppliedRate): never {
    const headers = { 'retry-after': String(result.retryAfterSeconds) };
    if (result.reason === 'per-minute' && perMinute.byKey) {
      throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, `Too Many Requests: this API key's rule allows ${perMinute.limit} requests per minute; it resets in ${result.retryAfterSeconds} s.`, { headers });
    }
    if (result.reason === 'concurrency' && concurrent.byKey) {
      throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, `Too Many Requests: this API key's rule allows ${concurrent.limit} requests in flight at once; retry when one finishes.`, { headers });
    }
    const message = result.reason === 'free-hourly' ? ErrorMessages.freeTierExhausted(this.settings.env.FREE_TIER_HOURLY_LIMIT) : ErrorMessages.tooManyRequests;
    throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, message, { headers });
  }

  private moneyRefusal(reason: 'credits' | 'key-budget', auth: AuthenticatedKey, now: number): GatewayException {
    if (reason === 'key-budget') return budgetRefused(auth.rules!.budget!, keyBudgetHold(auth, now)!.periodStart);
    return new GatewayException(HttpStatus.FORBIDDEN, ErrorMessages.creditsExhausted);
  }

  /**
   * In the store when it answers. While it does not (Redis away), requests are still served
   * (the queue may be down too, and the usage journal keeps their events): limits and holds
   * are then counted per replica, which loosens them by the number of replicas until it is back.
   */
  private async admitSomewhere(admission: Admission): Promise<{ store: LimitStore; result: AdmissionResult }> {
    const shared = this.store;
    if (shared.reachable) {
      try {
        const result = await shared.admit(admission, Date.now());
        if (this.degraded) this.logger.log('Redis answers again: limits and credit holds are shared by all replicas again');
        this.degraded = false;
        return { store: shared, result };
      } catch {
        // Fall through to the local counters.
      }
    }
    if (!this.degraded) {
      this.degraded = true;
      this.logger.warn('Redis is unreachable: limits and credit holds are counted by this replica alone until it is back');
    }
    return { store: this.local, result: await this.local.admit(admission, Date.now()) };
  }

  async onApplicationShutdown(): Promise<void> {
    this.running.close();
    await Promise.all([this.local.close(), this.store.close()]);
  }
}
