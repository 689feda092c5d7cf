import type { CooldownReason } from '@igw/messaging/connections-report';
import type { DeploymentQuotas } from '../connections/connections';
import type { UpstreamRateLimits } from '../provider.types';

export const MINUTE_MS = 60_000;

/** One deployment a request may go to, with what it would take of its quotas. */
export interface Candidate {
  deployment: string;
  quotas: DeploymentQuotas;
  /** The request's worst-case tokens (prompt and the most it may generate), reserved against `tpm`. */
  tokens: number;
}

/** What the store last saw of a deployment: what the strategies order by. */
export interface DeploymentView {
  inFlight: number;
  latencyMs?: number;
}

export interface Pick {
  /** The candidate reserved, by index; -1 when every one is cooling or over a quota. */
  chosen: number;
  /** When nothing was reserved: how long until the first candidate may take a request again. */
  retryAfterMs: number;
  /** Each candidate's in-flight calls and latency, when asked for (`withViews`: the strategies that order by them); else empty. */
  views: DeploymentView[];
}

/** A reservation: the request holds a place in its deployment's in-flight count and this minute's quotas. */
export interface Reservation {
  deployment: string;
  leaseId: string;
  minute: number;
  tokens: number;
}

/**
 * What became of an attempt: `answered` (its time to the first byte), `rate-limited` (429:
 * cooled for `cooldownMs`), `failed` (5xx, timeout, reset: counted in the failure rate, cooled
 * briefly), `refused` (the operator's key: cooled long), `neutral` (the request's own fault, or
 * the end of an answered call: nothing learned).
 */
export type AttemptOutcome =
  | { kind: 'answered'; latencyMs: number }
  | { kind: 'rate-limited'; cooldownMs: number }
  | { kind: 'failed' }
  | { kind: 'refused' }
  | { kind: 'neutral' };

/** The cooldown rules, one place: both stores apply these numbers. */
export const COOLDOWN_RULES = {
  /** A 429 without `retry-after` is cooled this long; one with is cooled as it says, up to the cap. */
  rateLimitedDefaultMs: 2_000,
  rateLimitedCapMs: 60_000,
  /** Each failure cools its deployment this briefly: the next requests go to its siblings. */
  failureBriefMs: 1_000,
  /** At least this many failures in the minute, and at least this share of its attempts, cool it for failureLongMs. */
  failureMinCount: 5,
  failureMinRate: 0.5,
  failureLongMs: 30_000,
  /** The operator's key refused (401, 402, 403): nothing will change before someone acts. */
  refusedMs: 60_000,
};

/** The cooldown of a 429, from its `retry-after` seconds. */
export function rateLimitedCooldownMs(retryAfterSeconds: number | undefined): number {
  if (retryAfterSeconds === undefined) return COOLDOWN_RULES.rateLimitedDefaultMs;
  return Math.min(Math.max(retryAfterSeconds * 1000, 1), COOLDOWN_RULES.rateLimitedCapMs);
}

/** A deployment's shared state as operators read it. */
export interface DeploymentSnapshot {
  inFlight: number;
  requestsThisMinute: number;
  tokensThisMinute: number;
  attemptsThisMinute: number;
  failuresThisMinute: number;
  coolingUntil: number;
  coolingReason: CooldownReason | null;
  latencyMs: number | null;
  /** Until when the upstream's own rate-limit headers said nothing is left (0 when they did not). */
  upstreamExhaustedUntil: number;
}

/**
 * Where every replica keeps each deployment's in-flight calls, this minute's requests and
 * tokens, and cooldown: Redis when REDIS_URL is set (redis-deployment-store.ts), the process
 * otherwise (InMemoryDeploymentStore). `reserve` checks and takes in one step, so two replicas
 * never both take a deployment's last request of the minute.
 */
export interface DeploymentStore {
  /**
   * Reserves the first candidate, in order, that is not cooling and whose quotas this request
   * fits; when none is, the first one cooling only for failures or a refusal (a deployment is
   * never left alone without real traffic to show it is back).
   */
  reserve(candidates: readonly Candidate[], leaseId: string, leaseMs: number, now?: number, withViews?: boolean): Pick | Promise<Pick>;
  /** An attempt's outcome; `release` also gives its place back, and `tokens` settles its reservation on what it used. */
  record(reservation: Reservation, outcome: AttemptOutcome, release: boolean, usedTokens?: number, now?: number): void;
  /** What the upstream's `x-ratelimit-*` headers said is left. */
  observe(deployment: string, left: UpstreamRateLimits, now?: number): void;
  snapshot(deployments: readonly string[], now?: number): Promise<DeploymentSnapshot[]>;
  close(): Promise<void>;
}

/** Where one deployment stands, as reserve and snapshot read it; a new minute starts its counts at zero. */
export interface DeploymentCounters {
  minute: number;
  requests: number;
  tokens: number;
  attempts: number;
  failures: number;
  coolingUntil: number;
  coolingReason: CooldownReason | null;
  latencyMs?: number;
  requestsLeft?: number;
  requestsResetAt?: number;
  tokensLeft?: number;
  tokensResetAt?: number;
  leases: Map<string, number>;
  /** When the leases are next looked through for lapsed ones (a replica's lost release): not at every call, which would cost a pass over every call in flight. */
  purgeAt?: number;
}

/** Why a candidate cannot take this request now: `soft` (cooled for failures) or until when it is blocked. */
function obstacle(state: DeploymentCounters, candidate: Candidate, now: number, minute: number): { soft: boolean; until: number } | null {
  if (state.coolingUntil > now) {
    if (state.coolingReason === 'rate-limited') return { soft: false, until: state.coolingUntil };
  }
  const nextMinute = (minute + 1) * MINUTE_MS;
  const { rpm, tpm, maxConcurrent } = candidate.quotas;
  if (state.requestsResetAt !== undefined && state.requestsResetAt > now && (state.requestsLeft ?? 1) <= 0) return { soft: false, until: state.requestsResetAt };
  if (state.tokensResetAt !== undefined && state.tokensResetAt > now && candidate.tokens > (state.tokensLeft ?? Infinity)) return { soft: false, until: state.tokensResetAt };
  if (maxConcurrent !== undefined && state.leases.size >= maxConcurrent) return { soft: false, until: now + 1_000 };
  if (rpm !== undefined && state.requests + 1 > rpm) return { soft: false, until: nextMinute };
  if (tpm !== undefined && state.tokens + candidate.tokens > tpm) return { soft: false, until: nextMinute };
  if (state.coolingUntil > now) return { soft: true, until: state.coolingUntil };
  return null;
}

/** The deployments' state in this process: standalone, or a gateway without Redis. */
export class InMemoryDeploymentStore implements DeploymentStore {
  private readonly states = new Map<string, DeploymentCounters>();

  /** Answered at once, not as a Promise: the standalone request path has no wait to add. */
  reserve(candidates: readonly Candidate[], leaseId: string, leaseMs: number, now = Date.now(), withViews = false): Pick {
    const minute = Math.floor(now / MINUTE_MS);
    let chosen = -1;
    let soft = -1;
    let retryAt = Infinity;
    const views: DeploymentView[] = [];
    for (let index = 0; index < candidates.length; index++) {
      if (chosen !== -1 && !withViews) break;
      const state = this.current(candidates[index].deployment, now, minute);
      if (withViews) views.push(state.latencyMs === undefined ? { inFlight: state.leases.size } : { inFlight: state.leases.size, latencyMs: state.latencyMs });
      if (chosen !== -1) continue;
      const blocked = obstacle(state, candidates[index], now, minute);
      if (!blocked) chosen = index;
      else if (blocked.soft) soft = soft === -1 ? index : soft;
      else retryAt = Math.min(retryAt, blocked.until);
    }
    if (chosen === -1) chosen = soft;
    if (chosen !== -1) {
      const state = this.current(candidates[chosen].deployment, now, minute);
      state.leases.set(leaseId, now + leaseMs);
      state.requests += 1;
      state.tokens += candidates[chosen].tokens;
      if (state.requestsLeft !== undefined) state.requestsLeft -= 1;
      if (state.tokensLeft !== undefined) state.tokensLeft -= candidates[chosen].tokens;
    }
    return { chosen, retryAfterMs: chosen === -1 ? Math.max(0, (retryAt === Infinity ? now + 1_000 : retryAt) - now) : 0, views };
  }

  record(reservation: Reservation, outcome: AttemptOutcome, release: boolean, usedTokens?: number, now = Date.now()): void {
    const minute = Math.floor(now / MINUTE_MS);
    const state = this.current(reservation.deployment, now, minute);
    if (release) state.leases.delete(reservation.leaseId);
    if (usedTokens !== undefined && reservation.minute === state.minute) state.tokens = Math.max(0, state.tokens + usedTokens - reservation.tokens);
    applyOutcome(state, outcome, now);
  }

  observe(deployment: string, left: UpstreamRateLimits, now = Date.now()): void {
    const state = this.current(deployment, now, Math.floor(now / MINUTE_MS));
    if (left.requestsLeft !== undefined) {
      state.requestsLeft = left.requestsLeft;
      state.requestsResetAt = now + (left.requestsResetMs ?? 1_000);
    }
    if (left.tokensLeft !== undefined) {
      state.tokensLeft = left.tokensLeft;
      state.tokensResetAt = now + (left.tokensResetMs ?? 1_000);
    }
  }

  async snapshot(deployments: readonly string[], now = Date.now()): Promise<DeploymentSnapshot[]> {
    const minute = Math.floor(now / MINUTE_MS);
    return deployments.map((deployment) => snapshotOf(this.current(deployment, now, minute), now));
  }

  async close(): Promise<void> {}

  private current(deployment: string, now: number, minute: number): DeploymentCounters {
    let state = this.states.get(deployment);
    if (!state) {
      state = { minute, requests: 0, tokens: 0, attempts: 0, failures: 0, coolingUntil: 0, coolingReason: null, leases: new Map() };
      this.states.set(deployment, state);
    } else if (state.minute !== minute) {
      Object.assign(state, { minute, requests: 0, tokens: 0, attempts: 0, failures: 0 });
    }
    if (state.leases.size > 0 && now >= (state.purgeAt ?? 0)) {
      for (const [lease, expiresAt] of state.leases) if (expiresAt <= now) state.leases.delete(lease);
      state.purgeAt = now + 1_000;
    }
    return state;
  }
}

function applyOutcome(state: DeploymentCounters, outcome: AttemptOutcome, now: number): void {
  switch (outcome.kind) {
    case 'answered':
      state.attempts += 1;
      state.latencyMs = state.latencyMs === undefined ? outcome.latencyMs : state.latencyMs * 0.8 + outcome.latencyMs * 0.2;
      return;
    case 'rate-limited':
      state.attempts += 1;
      coolFor(state, outcome.cooldownMs, 'rate-limited', now);
      return;
    case 'failed': {
      state.attempts += 1;
      state.failures += 1;
      const failing = state.failures >= COOLDOWN_RULES.failureMinCount && state.failures / state.attempts >= COOLDOWN_RULES.failureMinRate;
      coolFor(state, failing ? COOLDOWN_RULES.failureLongMs : COOLDOWN_RULES.failureBriefMs, 'failing', now);
      return;
    }
    case 'refused':
      state.attempts += 1;
      state.failures += 1;
      coolFor(state, COOLDOWN_RULES.refusedMs, 'refused', now);
      return;
    case 'neutral':
      return;
  }
}

/**
 * A later cooldown never shortens one already running. A 429's cooldown refuses requests, the
 * others only send them elsewhere: a failure during a 429's cooldown leaves it as it is.
 */
function coolFor(state: DeploymentCounters, ms: number, reason: CooldownReason, now: number): void {
  const running = state.coolingUntil > now;
  if (running && state.coolingReason === 'rate-limited' && reason !== 'rate-limited') return;
  state.coolingUntil = Math.max(running ? state.coolingUntil : 0, now + ms);
  state.coolingReason = reason;
}

function snapshotOf(state: DeploymentCounters, now: number): DeploymentSnapshot {
  const requestsOut = state.requestsResetAt !== undefined && state.requestsResetAt > now && (state.requestsLeft ?? 1) <= 0 ? state.requestsResetAt : 0;
  const tokensOut = state.tokensResetAt !== undefined && state.tokensResetAt > now && (state.tokensLeft ?? 1) <= 0 ? state.tokensResetAt : 0;
  return {
    inFlight: state.leases.size,
    requestsThisMinute: state.requests,
    tokensThisMinute: state.tokens,
    attemptsThisMinute: state.attempts,
    failuresThisMinute: state.failures,
    coolingUntil: state.coolingUntil > now ? state.coolingUntil : 0,
    coolingReason: state.coolingUntil > now ? state.coolingReason : null,
    latencyMs: state.latencyMs === undefined ? null : Math.round(state.latencyMs),
    upstreamExhaustedUntil: Math.max(requestsOut, tokensOut),
  };
}
