import type { CooldownReason } from '@igw/messaging/connections-report';
import type { Redis } from 'ioredis';
import type { UpstreamRateLimits } from '../provider.types';
import { COOLDOWN_RULES, MINUTE_MS, type AttemptOutcome, type Candidate, type DeploymentSnapshot, type DeploymentStore, type Pick, type Reservation } from './deployment-store';

/** An idle deployment's state is forgotten after a day. */
const STATE_TTL_MS = 86_400_000;

// The same rules as InMemoryDeploymentStore (deployment-store.ts), in one script call per
// decision: the check and the reservation are atomic across replicas.
// Hash fields: m minute, rq/tk requests/tokens of minute m, at/fl attempts/failures of minute m,
// cu/cr cooling until/reason, lat latency moving average, rl/rr requests left/until when, tl/tr tokens left/until when.
const READ_STATE = `
local function stateOf(h, z, now, minute)
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now)
  local f = redis.call('HMGET', h, 'm', 'rq', 'tk', 'at', 'fl', 'cu', 'cr', 'lat', 'rl', 'rr', 'tl', 'tr')
  local same = tonumber(f[1]) == minute
  return {
    same = same,
    inflight = redis.call('ZCARD', z),
    rq = same and tonumber(f[2] or '0') or 0,
    tk = same and tonumber(f[3] or '0') or 0,
    at = same and tonumber(f[4] or '0') or 0,
    fl = same and tonumber(f[5] or '0') or 0,
    cu = tonumber(f[6] or '0'),
    cr = f[7] or '',
    lat = f[8],
    rl = tonumber(f[9] or ''), rr = tonumber(f[10] or ''),
    tl = tonumber(f[11] or ''), tr = tonumber(f[12] or ''),
  }
end
local function startMinute(h, s, minute)
  if not s.same then redis.call('HSET', h, 'm', minute, 'rq', 0, 'tk', 0, 'at', 0, 'fl', 0) end
end
`;

// KEYS: per candidate its hash and its leases. ARGV: now, lease id, lease expiry, with views
// (1/0), then per candidate rpm, tpm, maxConcurrent (0 = unbounded) and its tokens.
// Returns chosen (1-based, 0 none), retry-at, then, with views, per candidate in-flight and
// latency (-1 unknown); without, the candidates after the chosen one are not read.
const RESERVE = `${READ_STATE}
local now = tonumber(ARGV[1])
local minute = math.floor(now / ${MINUTE_MS})
local nextMinute = (minute + 1) * ${MINUTE_MS}
local n = #KEYS / 2
local withViews = ARGV[4] == '1'
local chosen, soft, retryAt = 0, 0, -1
local answer = {0, 0}
local states = {}
for i = 1, n do
  if chosen > 0 and not withViews then break end
  local h, z = KEYS[2 * i - 1], KEYS[2 * i]
  local s = stateOf(h, z, now, minute)
  states[i] = s
  if withViews then
    answer[#answer + 1] = s.inflight
    answer[#answer + 1] = s.lat and math.floor(tonumber(s.lat)) or -1
  end
  if chosen == 0 then
    local base = 4 + (i - 1) * 4
    local rpm, tpm, maxc, tokens = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4])
    local blockedUntil = nil
    if s.cu > now and s.cr == 'rate-limited' then blockedUntil = s.cu
    elseif s.rr and s.rr > now and (s.rl or 1) <= 0 then blockedUntil = s.rr
    elseif s.tr and s.tr > now and tokens > (s.tl or math.huge) then blockedUntil = s.tr
    elseif maxc > 0 and s.inflight >= maxc then blockedUntil = now + 1000
    elseif rpm > 0 and s.rq + 1 > rpm then blockedUntil = nextMinute
    elseif tpm > 0 and s.tk + tokens > tpm then blockedUntil = nextMinute
    end
    if blockedUntil then
      if retryAt < 0 or blockedUntil < retryAt then retryAt = blockedUntil end
    elseif s.cu > now then
      if soft == 0 then soft = i end
    else
      chosen = i
    end
  end
end
if chosen == 0 then chosen = soft end
if chosen > 0 then
  local h, z = KEYS[2 * chosen - 1], KEYS[2 * chosen]
  local s = states[chosen]
  local tokens = tonumber(ARGV[4 + (chosen - 1) * 4 + 4])
  startMinute(h, s, minute)
  redis.call('ZADD', z, tonumber(ARGV[3]), ARGV[2])
  redis.call('HINCRBY', h, 'rq', 1)
  redis.call('HINCRBY', h, 'tk', tokens)
  if s.rl then redis.call('HINCRBY', h, 'rl', -1) end
  if s.tl then redis.call('HINCRBY', h, 'tl', -tokens) end
  redis.call('PEXPIRE', h, ${STATE_TTL_MS})
  redis.call('PEXPIRE', z, ${STATE_TTL_MS})
end
answer[1] = chosen
answer[2] = retryAt
return answer
`;

// KEYS: hash, leases. ARGV: now, lease id, release (1/0), reservation's minute, reserved tokens,
// used tokens (-1 unknown), outcome kind, cooldown ms (rate-limited), latency ms (answered).
const RECORD = `${READ_STATE}
local now = tonumber(ARGV[1])
local minute = math.floor(now / ${MINUTE_MS})
local h, z = KEYS[1], KEYS[2]
local s = stateOf(h, z, now, minute)
startMinute(h, s, minute)
if ARGV[3] == '1' then redis.call('ZREM', z, ARGV[2]) end
local used = tonumber(ARGV[6])
if used >= 0 and tonumber(ARGV[4]) == minute then
  local tk = s.tk + used - tonumber(ARGV[5])
  if tk < 0 then tk = 0 end
  redis.call('HSET', h, 'tk', tk)
end
local kind = ARGV[7]
local function coolFor(ms, reason)
  local running = s.cu > now
  if running and s.cr == 'rate-limited' and reason ~= 'rate-limited' then return end
  local blockedUntil = now + ms
  if running and s.cu > blockedUntil then blockedUntil = s.cu end
  redis.call('HSET', h, 'cu', blockedUntil, 'cr', reason)
end
if kind == 'answered' then
  redis.call('HINCRBY', h, 'at', 1)
  local latency = tonumber(ARGV[9])
  local lat = s.lat and (tonumber(s.lat) * 0.8 + latency * 0.2) or latency
  redis.call('HSET', h, 'lat', tostring(lat))
elseif kind == 'rate-limited' then
  redis.call('HINCRBY', h, 'at', 1)
  coolFor(tonumber(ARGV[8]), 'rate-limited')
elseif kind == 'failed' then
  local at = redis.call('HINCRBY', h, 'at', 1)
  local fl = redis.call('HINCRBY', h, 'fl', 1)
  if fl >= ${COOLDOWN_RULES.failureMinCount} and fl / at >= ${COOLDOWN_RULES.failureMinRate} then
    coolFor(${COOLDOWN_RULES.failureLongMs}, 'failing')
  else
    coolFor(${COOLDOWN_RULES.failureBriefMs}, 'failing')
  end
elseif kind == 'refused' then
  redis.call('HINCRBY', h, 'at', 1)
  redis.call('HINCRBY', h, 'fl', 1)
  coolFor(${COOLDOWN_RULES.refusedMs}, 'refused')
end
redis.call('PEXPIRE', h, ${STATE_TTL_MS})
return 1
`;

// KEYS: hash. ARGV: requests left, their reset ms, tokens left, their reset ms (-1: not said), now.
const OBSERVE = `
local now = tonumber(ARGV[5])
if tonumber(ARGV[1]) >= 0 then redis.call('HSET', KEYS[1], 'rl', ARGV[1], 'rr', now + tonumber(ARGV[2])) end
if tonumber(ARGV[3]) >= 0 then redis.call('HSET', KEYS[1], 'tl', ARGV[3], 'tr', now + tonumber(ARGV[4])) end
redis.call('PEXPIRE', KEYS[1], ${STATE_TTL_MS})
return 1
`;

type ScriptedRedis = Redis & {
  reserveDeployment(...args: Array<string | number>): Promise<number[]>;
  recordDeployment(...args: Array<string | number>): Promise<number>;
  observeDeployment(...args: Array<string | number>): Promise<number>;
};

/**
 * The deployments' state in Redis, shared by every replica. A failed command never fails a
 * request: reserve then admits on no state (the request is let through to its first
 * candidate), and a lost record only leaves a lease to lapse.
 */
export class RedisDeploymentStore implements DeploymentStore {
  private readonly redis: ScriptedRedis;

  /** `redis`: a connection of the store's own (closed with it), made with platform's `requestPathRedisOptions`. */
  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    this.redis = redis as ScriptedRedis;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('reserveDeployment', { lua: RESERVE });
    this.redis.defineCommand('recordDeployment', { numberOfKeys: 2, lua: RECORD });
    this.redis.defineCommand('observeDeployment', { numberOfKeys: 1, lua: OBSERVE });
  }

  /** Resolves once connected, or after `timeoutMs` (the store then serves as if Redis were out until it connects). */
  async whenReady(timeoutMs: number): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.redis.once('ready', done);
    });
  }

  private stateKey(deployment: string): string {
    return `${this.prefix}:deployment:${deployment}`;
  }

  private leasesKey(deployment: string): string {
    return `${this.prefix}:deployment:${deployment}:leases`;
  }

  async reserve(candidates: readonly Candidate[], leaseId: string, leaseMs: number, now = Date.now(), withViews = false): Promise<Pick> {
    const keys: string[] = [];
    const args: Array<string | number> = [now, leaseId, now + leaseMs, withViews ? 1 : 0];
    for (const candidate of candidates) {
      keys.push(this.stateKey(candidate.deployment), this.leasesKey(candidate.deployment));
      args.push(candidate.quotas.rpm ?? 0, candidate.quotas.tpm ?? 0, candidate.quotas.maxConcurrent ?? 0, candidate.tokens);
    }
    try {
      const answer = await this.redis.reserveDeployment(keys.length, ...keys, ...args);
      const views = withViews
        ? candidates.map((_candidate, index) => {
            const latency = Number(answer[3 + index * 2]);
            return latency >= 0 ? { inFlight: Number(answer[2 + index * 2]), latencyMs: latency } : { inFlight: Number(answer[2 + index * 2]) };
          })
        : [];
      const chosen = Number(answer[0]) - 1;
      const retryAt = Number(answer[1]);
      return { chosen, retryAfterMs: chosen === -1 ? Math.max(0, (retryAt < 0 ? now + 1_000 : retryAt) - now) : 0, views };
    } catch {
      // Redis is out of reach: the gateway still serves, on the first candidate, without shared quotas.
      return { chosen: 0, retryAfterMs: 0, views: [] };
    }
  }

  record(reservation: Reservation, outcome: AttemptOutcome, release: boolean, usedTokens?: number, now = Date.now()): void {
    this.redis
      .recordDeployment(
        this.stateKey(reservation.deployment),
        this.leasesKey(reservation.deployment),
        now,
        reservation.leaseId,
        release ? 1 : 0,
        reservation.minute,
        reservation.tokens,
        usedTokens ?? -1,
        outcome.kind,
        outcome.kind === 'rate-limited' ? outcome.cooldownMs : 0,
        outcome.kind === 'answered' ? Math.round(outcome.latencyMs) : 0,
      )
      .catch(() => undefined);
  }

  observe(deployment: string, left: UpstreamRateLimits, now = Date.now()): void {
    this.redis
      .observeDeployment(this.stateKey(deployment), left.requestsLeft ?? -1, left.requestsResetMs ?? 1_000, left.tokensLeft ?? -1, left.tokensResetMs ?? 1_000, now)
      .catch(() => undefined);
  }

  async snapshot(deployments: readonly string[], now = Date.now()): Promise<DeploymentSnapshot[]> {
    const minute = Math.floor(now / MINUTE_MS);
    const pipeline = this.redis.pipeline();
    for (const deployment of deployments) {
      pipeline.hmget(this.stateKey(deployment), 'm', 'rq', 'tk', 'at', 'fl', 'cu', 'cr', 'lat', 'rl', 'rr', 'tl', 'tr');
      pipeline.zcount(this.leasesKey(deployment), now, '+inf');
    }
    const results = (await pipeline.exec()) ?? [];
    return deployments.map((_deployment, index) => {
      const fields = (results[index * 2]?.[1] as Array<string | null> | undefined) ?? [];
      const inFlight = Number(results[index * 2 + 1]?.[1] ?? 0);
      const same = Number(fields[0]) === minute;
      const count = (value: string | null | undefined) => (same ? Number(value ?? 0) : 0);
      const coolingUntil = Number(fields[5] ?? 0);
      const cooling = coolingUntil > now;
      const requestsOut = Number(fields[9] ?? 0) > now && Number(fields[8] ?? 1) <= 0 ? Number(fields[9]) : 0;
      const tokensOut = Number(fields[11] ?? 0) > now && Number(fields[10] ?? 1) <= 0 ? Number(fields[11]) : 0;
      return {
        inFlight,
        requestsThisMinute: count(fields[1]),
        tokensThisMinute: count(fields[2]),
        attemptsThisMinute: count(fields[3]),
        failuresThisMinute: count(fields[4]),
        coolingUntil: cooling ? coolingUntil : 0,
        coolingReason: cooling ? ((fields[6] as CooldownReason | null) ?? null) : null,
        latencyMs: fields[7] ? Math.round(Number(fields[7])) : null,
        upstreamExhaustedUntil: Math.max(requestsOut, tokensOut),
      };
    });
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
