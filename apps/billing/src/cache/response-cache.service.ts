import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { formatScaled, parseDecimal } from '@igw/domain';
import { MessagingService, QueueName, RpcTimeoutError, type ResponseCacheInvalidation } from '@igw/messaging';
import { GatewayException } from '@igw/http';
import { DataSource } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
import type { AccountCacheStatsDto, CacheCountsDto, CacheInvalidationQueryDto } from './dto/cache-admin.dto';

/** An admin waits for the answer: a gateway that does not take the job in this time is taken as none running. */
export const CACHE_INVALIDATION_TIMEOUT_MS = 5_000;
/** The console's counts cover this many days back: the (account_id, occurred_at) index bounds the rows read. */
export const CACHE_STATS_DAYS = 30;

export const NO_GATEWAY_FOR_CACHE = `Service Unavailable: no gateway answered within ${CACHE_INVALIDATION_TIMEOUT_MS / 1000} s, so no cache entry was removed. Check that a gateway is running on billing's queue backend (the same REDIS_URL, or DATABASE_URL without it, and QUEUE_PREFIX), then retry.`;

interface CountsRow {
  key_id: string;
  hits: number;
  misses: number;
  saved_usd: string;
}

/** Billing's side of the gateways' response cache: removing entries (the gateways hold them) and counting what the ledger says of it. */
@Injectable()
export class ResponseCacheService {
  private readonly logger = new Logger(ResponseCacheService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly messaging: MessagingService,
  ) {}

  /**
   * Asks whichever gateway takes the job to remove the entries (the store is shared by every
   * gateway, so one answer covers them all). Billing only produces on this queue.
   */
  async invalidate(query: CacheInvalidationQueryDto): Promise<{ removed: number }> {
    await this.accounts.get(query.account);
    if (query.key !== undefined) {
      const owned: unknown[] = await this.dataSource.query(`SELECT 1 FROM "billing"."api_keys" WHERE id = $1 AND account_id = $2`, [query.key, query.account]);
      if (owned.length === 0) throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} key: Expected an API key of account ${query.account}. Received '${query.key}'`);
    }
    const ask: ResponseCacheInvalidation = { accountId: query.account, ...(query.model !== undefined ? { model: query.model } : {}), ...(query.key !== undefined ? { keyId: query.key } : {}) };
    try {
      const { removed } = await this.messaging.request(QueueName.GatewayRpc, 'cache.invalidate', ask, CACHE_INVALIDATION_TIMEOUT_MS);
      return { removed };
    } catch (error) {
      if (error instanceof RpcTimeoutError) {
        this.logger.warn(`no gateway took the cache invalidation of account ${query.account} within ${CACHE_INVALIDATION_TIMEOUT_MS} ms`);
        throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, NO_GATEWAY_FOR_CACHE, { cause: error });
      }
      throw error;
    }
  }

  /** Hits, misses and USD saved of the account and each of its keys over the last CACHE_STATS_DAYS days, from the ledger. */
  async stats(accountId: string, now = new Date()): Promise<AccountCacheStatsDto> {
    await this.accounts.get(accountId);
    const from = new Date(now.getTime() - CACHE_STATS_DAYS * 86_400_000);
    const rows: CountsRow[] = await this.dataSource.query(
      `SELECT key_id::text, COUNT(*) FILTER (WHERE cache = 'hit')::integer AS hits, COUNT(*) FILTER (WHERE cache = 'miss')::integer AS misses,
              COALESCE(SUM(cache_saved_usd), 0)::text AS saved_usd
         FROM "billing"."ledger_entries"
        WHERE account_id = $1 AND occurred_at >= $2 AND kind = 'usage' AND cache IS NOT NULL
        GROUP BY key_id ORDER BY key_id`,
      [accountId, from],
    );
    const keys = rows.map((row) => ({ keyId: row.key_id, hits: row.hits, misses: row.misses, savedUsd: plainDecimal(row.saved_usd) }));
    return { from: from.toISOString(), account: total(keys), keys };
  }
}

function total(keys: readonly CacheCountsDto[]): CacheCountsDto {
  let hits = 0;
  let misses = 0;
  // Exact: the sums are added as integers of the finest scale any of them has.
  let scale = 0;
  for (const key of keys) scale = Math.max(scale, parseDecimal(key.savedUsd).scale);
  let savedUnits = 0n;
  for (const key of keys) {
    hits += key.hits;
    misses += key.misses;
    const saved = parseDecimal(key.savedUsd);
    savedUnits += saved.units * 10n ** BigInt(scale - saved.scale);
  }
  return { hits, misses, savedUsd: formatScaled(savedUnits, scale) };
}

/** A numeric's text without the trailing zeros of its scale. */
function plainDecimal(text: string): string {
  const value = parseDecimal(text);
  return formatScaled(value.units, value.scale);
}
