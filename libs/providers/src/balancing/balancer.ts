import { randomBytes } from 'node:crypto';
import type { CooldownReason } from '@igw/messaging/connections-report';
import type { RoutingStrategy } from '@igw/contracts';
import { isRetriableUpstreamError } from '../fallback';
import type { UpstreamRateLimits } from '../provider.types';
import type { RouteTarget } from '../routing';
import type { CancelSignal } from '../transport/cancellation';
import { UpstreamHttpError, UpstreamProtocolError, UpstreamTimeoutError, UpstreamUnavailableError } from '../upstream.errors';
import { MINUTE_MS, rateLimitedCooldownMs, type AttemptOutcome, type DeploymentStore, type DeploymentView, type Reservation } from './deployment-store';
import { TierOrder } from './strategies';

/** Every deployment that could take the request is cooling after a 429 or over a quota: the client is told when to come back. */
export class DeploymentsBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`every deployment is rate limited or over its quota; retry in ${retryAfterSeconds} s`);
    this.name = 'DeploymentsBusyError';
  }
}

/** What the balancer learns from an attempt's failure. */
export function outcomeOf(error: unknown): AttemptOutcome {
  if (error instanceof UpstreamHttpError) {
    if (error.status === 429) return { kind: 'rate-limited', cooldownMs: rateLimitedCooldownMs(error.retryAfterSeconds) };
    if (error.refusedOperatorAccount) return { kind: 'refused' };
    return error.status >= 500 ? { kind: 'failed' } : { kind: 'neutral' };
  }
  if (error instanceof UpstreamUnavailableError || error instanceof UpstreamTimeoutError || error instanceof UpstreamProtocolError) return { kind: 'failed' };
  return { kind: 'neutral' };
}

const COOLING: Partial<Record<AttemptOutcome['kind'], CooldownReason>> = { 'rate-limited': 'rate-limited', failed: 'failing', refused: 'refused' };

/**
 * A request's place on the deployment that answered it: held while its answer is read (a
 * stream), given back once, with the tokens it used, when the request is over.
 */
export class DeploymentLease {
  private adopted = false;
  private released = false;
  private latencyMs = 0;

  constructor(
    private readonly store: DeploymentStore,
    readonly reservation: Reservation,
  ) {}

  get deployment(): string {
    return this.reservation.deployment;
  }

  /** The caller keeps the lease past the attempt, and releases it. */
  adopt(): void {
    this.adopted = true;
  }

  get isAdopted(): boolean {
    return this.adopted;
  }

  answered(latencyMs: number): void {
    this.latencyMs = latencyMs;
  }

  /** Gives the place back; `usedTokens` settles the tokens reserved on what the answer used (absent: the reservation stands). */
  release(usedTokens?: number): void {
    if (this.released) return;
    this.released = true;
    this.store.record(this.reservation, { kind: 'answered', latencyMs: this.latencyMs }, true, usedTokens);
  }
}

export interface BalancedCall {
  /** Names the tier orders kept for this model (e.g. its id and endpoint group). */
  group: string;
  /** The ledger's name of the endpoint, for the metrics. */
  endpoint: string;
  strategy: RoutingStrategy;
  /** The request's worst-case tokens, reserved against each deployment's `tpm`. */
  tokens: number;
  /** How long a lease never given back (a replica that died) counts in flight. */
  leaseMs: number;
  /** Aborted when no other deployment may be tried (the client left, or the attempt was billed). */
  signal?: CancelSignal;
}

export interface BalancerHooks {
  /** An attempt failed and the request moves on to another deployment. */
  onRetry?(target: RouteTarget, error: unknown, call: BalancedCall): void;
  /** An attempt's outcome cooled its deployment. */
  onCooldown?(deployment: string, reason: CooldownReason): void;
}

const MAX_ORDERS = 10_000;
/** The strategies that order by what the store last saw of each deployment: only they need it read. */
const ORDERED_BY_VIEWS: ReadonlySet<RoutingStrategy> = new Set(['least-busy', 'lowest-latency']);

/**
 * Picks a deployment for each attempt of a request: the lowest tier first, shared by the
 * model's strategy; a deployment cooling or over a quota (shared by every replica, in the
 * store) is skipped before it is called; a failure re-picks among those not tried yet, down
 * the tiers. Replaces a per-process circuit breaker: one mechanism for health and quotas.
 */
export class DeploymentBalancer {
  private readonly orders = new Map<string, TierOrder>();
  private readonly views = new Map<string, DeploymentView>();
  private readonly rateLimitListeners = new Map<string, (left: UpstreamRateLimits) => void>();
  private readonly leasePrefix = randomBytes(6).toString('base64url');
  private leaseCounter = 0;

  constructor(
    readonly store: DeploymentStore,
    private readonly hooks: BalancerHooks = {},
  ) {}

  async run<T, R extends RouteTarget>(targets: readonly R[], attempt: (target: R, lease: DeploymentLease) => Promise<T>, call: BalancedCall): Promise<T> {
    if (targets.length === 0) throw new Error('the balancer needs at least one target');
    let remaining = this.ordered(targets, call);
    let lastError: unknown;
    for (;;) {
      const leaseId = `${this.leasePrefix}:${++this.leaseCounter}`;
      const now = Date.now();
      const reserved = this.store.reserve(
        remaining.map((target) => ({ deployment: target.deployment, quotas: target.quotas, tokens: call.tokens })),
        leaseId,
        call.leaseMs,
        now,
        ORDERED_BY_VIEWS.has(call.strategy),
      );
      const pick = reserved instanceof Promise ? await reserved : reserved;
      pick.views.forEach((view, index) => this.views.set(remaining[index].deployment, view));
      if (pick.chosen === -1) {
        if (lastError !== undefined) throw lastError;
        throw new DeploymentsBusyError(Math.max(1, Math.ceil(pick.retryAfterMs / 1000)));
      }
      const target = remaining[pick.chosen];
      // What OpenAI's and Azure's x-ratelimit-* headers say is left is believed over our own counts.
      target.onRateLimits ??= this.rateLimitListener(target.deployment);
      const lease = new DeploymentLease(this.store, { deployment: target.deployment, leaseId, minute: Math.floor(now / MINUTE_MS), tokens: call.tokens });
      const started = performance.now();
      try {
        const result = await attempt(target, lease);
        lease.answered(performance.now() - started);
        if (!lease.isAdopted) lease.release();
        return result;
      } catch (error) {
        const outcome = outcomeOf(error);
        // A refused or failed call's tokens are given back to the minute; an answer past the limits was paid, as the prompt of a call that timed out after it was sent.
        this.store.record(lease.reservation, outcome, true, call.signal?.aborted ? undefined : 0);
        const reason = COOLING[outcome.kind];
        if (reason) this.hooks.onCooldown?.(target.deployment, reason);
        if (!isRetriableUpstreamError(error) || call.signal?.aborted) throw error;
        lastError = error;
        remaining = remaining.filter((other) => other !== target);
        if (remaining.length === 0) throw error;
        this.hooks.onRetry?.(target, error, call);
      }
    }
  }

  private rateLimitListener(deployment: string): (left: UpstreamRateLimits) => void {
    let listener = this.rateLimitListeners.get(deployment);
    if (!listener) {
      if (this.rateLimitListeners.size >= MAX_ORDERS) this.rateLimitListeners.clear();
      listener = (left) => this.store.observe(deployment, left);
      this.rateLimitListeners.set(deployment, listener);
    }
    return listener;
  }

  /** The tiers in order, each ordered by the strategy: the order a request tries its deployments in. */
  private ordered<R extends RouteTarget>(targets: readonly R[], call: BalancedCall): R[] {
    if (targets.length === 1) return [targets[0]];
    const tiers = new Map<number, R[]>();
    for (const target of targets) {
      const tier = tiers.get(target.tier);
      if (tier) tier.push(target);
      else tiers.set(target.tier, [target]);
    }
    const ordered: R[] = [];
    for (const tier of [...tiers.keys()].sort((a, b) => a - b)) {
      const members = tiers.get(tier) as R[];
      ordered.push(...(members.length === 1 ? members : this.orderOf(`${call.group}|${tier}|${call.strategy}`, call.strategy).order(members, this.views)));
    }
    return ordered;
  }

  private orderOf(key: string, strategy: RoutingStrategy): TierOrder {
    let order = this.orders.get(key);
    if (!order) {
      if (this.orders.size >= MAX_ORDERS) this.orders.clear();
      order = new TierOrder(strategy);
      this.orders.set(key, order);
    }
    return order;
  }
}
