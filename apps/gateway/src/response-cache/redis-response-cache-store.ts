import { Redis } from 'ioredis';
import { requestPathRedisOptions } from '@igw/config';
import type { CacheEntryAddress, CacheInvalidation, ResponseCacheStore, StoredEntry } from './response-cache-store';

/**
 * Per account, four keys share one hash tag (one cluster slot): each entry's value (`e:<key
 * id>:<hash>`, with Redis's own expiry), an index of its entries by expiry (a sorted set of
 * `<key id>:<hash>`), their facts (a hash: bytes, stored-at, model, writing key) and their bytes
 * together. A write evicts, in the same script, the entries that expired and then the account's
 * soonest-to-expire ones while its bytes pass the budget, never another account's. The index and
 * its companions expire with the account's last entry.
 */
const KEEP = `
local entry, index, facts, total = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local member, value, now, ttl, fact, bytes, budget, work, prefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local previous = redis.call('HGET', facts, member)
if previous then redis.call('DECRBY', total, tonumber(string.match(previous, '^(%d+)'))) end
redis.call('SET', entry, value, 'PX', ttl)
redis.call('ZADD', index, now + ttl, member)
redis.call('HSET', facts, member, fact)
local held = redis.call('INCRBY', total, bytes)
local evicted = 0
while work > 0 do
  local oldest = redis.call('ZRANGE', index, 0, 0, 'WITHSCORES')
  if #oldest == 0 or oldest[1] == member then break end
  local expired = tonumber(oldest[2]) <= now
  if not expired and held <= budget then break end
  local gone = redis.call('HGET', facts, oldest[1])
  if gone then held = redis.call('DECRBY', total, tonumber(string.match(gone, '^(%d+)'))) end
  redis.call('HDEL', facts, oldest[1])
  redis.call('ZREM', index, oldest[1])
  if redis.call('DEL', prefix .. oldest[1]) == 1 and not expired then evicted = evicted + 1 end
  work = work - 1
end
local last = redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')
if #last > 0 then
  local until_ms = math.max(1, tonumber(last[2]) - now)
  redis.call('PEXPIRE', index, until_ms)
  redis.call('PEXPIRE', facts, until_ms)
  redis.call('PEXPIRE', total, until_ms)
end
return evicted
`;

/** Removes the listed members' entries and facts; answers how many entries still lived. */
const FORGET = `
local index, facts, total, prefix = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local removed = 0
for position = 2, #ARGV do
  local member = ARGV[position]
  local fact = redis.call('HGET', facts, member)
  if fact then
    redis.call('DECRBY', total, tonumber(string.match(fact, '^(%d+)')))
    redis.call('HDEL', facts, member)
  end
  redis.call('ZREM', index, member)
  removed = removed + redis.call('DEL', prefix .. member)
end
return removed
`;

/** Entries a write may evict, and an invalidation removes per script call: each call's work stays bounded. */
const WORK_PER_CALL = 256;
const SEPARATOR = '\t';

interface ScriptedRedis extends Redis {
  keepEntry(...args: Array<string | number | Buffer>): Promise<number>;
  forgetEntries(...args: string[]): Promise<number>;
}

/** The response cache in Redis, shared by every replica (REDIS_URL). */
export class RedisResponseCacheStore implements ResponseCacheStore {
  readonly backend = 'redis';
  private readonly redis: ScriptedRedis;

  /** A store on a connection of its own, which fails a command at once while Redis is away (requestPathRedisOptions). */
  static connect(url: string, prefix: string, commandTimeoutMs: number): RedisResponseCacheStore {
    return new RedisResponseCacheStore(new Redis(url, requestPathRedisOptions(commandTimeoutMs)), prefix);
  }

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    this.redis = redis as ScriptedRedis;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('keepEntry', { numberOfKeys: 4, lua: KEEP });
    this.redis.defineCommand('forgetEntries', { numberOfKeys: 3, lua: FORGET });
  }

  /** Resolves once the connection is ready, or after `timeoutMs` (the cache then bypasses until Redis answers). */
  whenReady(timeoutMs: number): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.redis.once('ready', done);
    });
  }

  async get(address: CacheEntryAddress): Promise<StoredEntry | undefined> {
    const keys = this.keysOf(address.accountId);
    const member = memberOf(address);
    const [[, value], [, fact]] = (await this.redis.multi().getBuffer(keys.entries + member).hget(keys.facts, member).exec()) as [[unknown, Buffer | null], [unknown, string | null]];
    if (!value || !fact) return undefined;
    return { value, storedAt: Number(fact.split(SEPARATOR)[1]) };
  }

  set(address: CacheEntryAddress, value: Buffer, ttlSeconds: number, accountBytes: number): Promise<number> {
    const keys = this.keysOf(address.accountId);
    const member = memberOf(address);
    const now = Date.now();
    const fact = [value.length, now, address.model, address.writerKeyId].join(SEPARATOR);
    return this.redis.keepEntry(keys.entries + member, keys.index, keys.facts, keys.total, member, value, now, ttlSeconds * 1000, fact, value.length, accountBytes, WORK_PER_CALL, keys.entries);
  }

  async invalidate({ accountId, model, keyId }: CacheInvalidation): Promise<number> {
    const keys = this.keysOf(accountId);
    let removed = 0;
    let cursor = '0';
    do {
      const [next, fields] = await this.redis.hscan(keys.facts, cursor, 'COUNT', WORK_PER_CALL);
      cursor = next;
      const members: string[] = [];
      for (let position = 0; position < fields.length; position += 2) {
        const member = fields[position];
        const [, , entryModel, writer] = fields[position + 1].split(SEPARATOR);
        if (model !== undefined && entryModel !== model) continue;
        if (keyId !== undefined && writer !== keyId && !member.startsWith(`${keyId}:`)) continue;
        members.push(member);
      }
      if (members.length > 0) removed += await this.redis.forgetEntries(keys.index, keys.facts, keys.total, keys.entries, ...members);
    } while (cursor !== '0');
    return removed;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private keysOf(accountId: string) {
    const base = `${this.prefix}:response-cache:{${accountId}}:`;
    return { entries: `${base}e:`, index: `${base}index`, facts: `${base}facts`, total: `${base}bytes` };
  }
}

function memberOf({ keyId, hash }: CacheEntryAddress): string {
  return `${keyId}:${hash}`;
}
