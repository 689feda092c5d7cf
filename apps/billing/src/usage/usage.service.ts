import { HttpStatus, Injectable } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { formatMicroCredits, formatScaled, parseDecimal, toScaledUnits, USD_SCALE } from '@igw/domain';
import { GatewayException } from '@igw/http';
import { DataSource } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
import type { LedgerEntryKind } from '../ledger/ledger-entry.entity';
import { DEFAULT_USAGE_PAGE_SIZE, type ListUsageQueryDto, type UsageFilterQueryDto, type UsageGroup, type UsageSummaryQueryDto, type UsageWindowQueryDto } from './dto/usage-query.dto';
import type { UsageEntryDto, UsageListDto, UsageSummaryDto, UsageSummaryRowDto } from './dto/usage.dto';
import { instantMillis, normalizeInstant } from './instant';
import { decodeUsageCursor, encodeUsageCursor } from './usage-cursor';

interface LedgerRow {
  id: string;
  kind: LedgerEntryKind;
  request_id: string | null;
  client_request_id: string | null;
  key_id: string | null;
  model: string | null;
  endpoint: string | null;
  deployment: string | null;
  cache: 'hit' | 'miss' | null;
  cache_saved_usd: string | null;
  units: Record<string, number> | null;
  amount_micro: string;
  usd: string;
  catalogue_revision: number | null;
  prices: Array<{ unit: string; price: number; per: number }> | null;
  reason: string | null;
  occurred_at: Date;
  recorded_at: Date;
  cursor_time: string;
}

interface SummaryRow {
  day: string;
  hour: string | null;
  model?: string | null;
  key_id?: string | null;
  requests: string;
  amount_micro: string;
  usd: string;
  units: Record<string, string>;
}

/** `Body validation error! <param>: <message>`, the platform's wording for query parameters too. */
function invalidQuery(param: string, message: string): GatewayException {
  return new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${param}: ${message}`);
}

/** An exact decimal as PostgreSQL's numeric prints it, as bigint units of 10^-USD_SCALE. */
const usdUnits = (decimal: string): bigint => toScaledUnits(parseDecimal(decimal), USD_SCALE);
const formatUsd = (units: bigint): string => formatScaled(units, USD_SCALE);

/** Reads the ledger for the admin API. Every sum is made by PostgreSQL on the exact columns. */
@Injectable()
export class UsageService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
  ) {}

  /** Ledger entries of an account, newest first, a page at a time (keyset on occurred_at, id). */
  async list(accountId: string, query: ListUsageQueryDto): Promise<UsageListDto> {
    await this.accounts.get(accountId);
    const conditions: string[] = [];
    const params: unknown[] = [accountId];
    const bind = (value: unknown): string => `$${params.push(value)}`;
    this.windowConditions(query, conditions, bind);
    this.filterConditions(query, conditions, bind);
    if (query.kind !== undefined) conditions.push(`kind = ${bind(query.kind)}`);
    if (query.cursor !== undefined) {
      const cursor = decodeUsageCursor(query.cursor);
      if (!cursor) throw invalidQuery('cursor', `Expected the nextCursor of a previous page. Received '${query.cursor}'`);
      conditions.push(`(occurred_at, id) < (${bind(cursor.occurredAt)}::timestamptz, ${bind(cursor.id)}::bigint)`);
    }
    const limit = query.limit ?? DEFAULT_USAGE_PAGE_SIZE;
    const rows: LedgerRow[] = await this.dataSource.query(
      `SELECT id, kind, request_id, client_request_id, key_id, model, endpoint, deployment, cache, cache_saved_usd::text AS cache_saved_usd, units, amount_micro, usd::text AS usd, catalogue_revision, prices, reason,
              occurred_at, recorded_at,
              to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_time
         FROM "billing"."ledger_entries"
        WHERE account_id = $1${conditions.map((condition) => ` AND ${condition}`).join('')}
        ORDER BY occurred_at DESC, id DESC
        LIMIT ${bind(limit + 1)}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor = rows.length > limit && last ? encodeUsageCursor({ occurredAt: last.cursor_time, id: last.id }) : null;
    return { object: 'list', data: page.map(toEntry), nextCursor };
  }

  /**
   * Usage of an account summed per UTC day (or hour) and, as asked, per model and per key.
   * One statement, so every row and the totals come from the same snapshot; credits and USD
   * are summed on bigint/numeric and the units per name out of the jsonb.
   */
  async summary(accountId: string, query: UsageSummaryQueryDto): Promise<UsageSummaryDto> {
    await this.accounts.get(accountId);
    const conditions: string[] = [];
    const params: unknown[] = [accountId];
    const bind = (value: unknown): string => `$${params.push(value)}`;
    this.windowConditions(query, conditions, bind);
    this.filterConditions(query, conditions, bind);
    const groups = new Set<UsageGroup>((query.groupBy ?? ['model']).filter((group): group is UsageGroup => group !== ''));
    const hourly = query.granularity === 'hour';
    // Fixed column names, chosen here: nothing from the request is spliced into the SQL text.
    const columns = ['day', 'hour', ...(groups.has('model') ? ['model'] : []), ...(groups.has('key') ? ['key_id'] : [])];
    const columnList = columns.join(', ');
    const sameGroup = columns.map((column) => `s.${column} IS NOT DISTINCT FROM g.${column}`).join(' AND ');
    const order = columns.map((column) => (column === 'model' ? 'g.model COLLATE "C" NULLS FIRST' : `g.${column} NULLS FIRST`)).join(', ');
    const rows: SummaryRow[] = await this.dataSource.query(
      `WITH entries AS (
         SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                ${hourly ? `to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":00:00Z"')` : 'NULL::text'} AS hour,
                model, key_id, amount_micro, usd, units
           FROM "billing"."ledger_entries"
          WHERE account_id = $1 AND kind = 'usage'${conditions.map((condition) => ` AND ${condition}`).join('')}
       ),
       groups AS (
         SELECT ${columnList}, count(*) AS requests, sum(amount_micro) AS amount_micro, sum(usd) AS usd
           FROM entries GROUP BY ${columnList}
       ),
       unit_sums AS (
         SELECT ${columns.map((column) => `e.${column}`).join(', ')}, u.key AS unit, sum((u.value #>> '{}')::numeric) AS total
           FROM entries e
          CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(e.units) = 'object' THEN e.units ELSE '{}'::jsonb END) u
          WHERE jsonb_typeof(u.value) = 'number'
          GROUP BY ${columns.map((column) => `e.${column}`).join(', ')}, u.key
       )
       SELECT ${columns.map((column) => `g.${column}`).join(', ')},
              g.requests::text AS requests, g.amount_micro::text AS amount_micro, g.usd::text AS usd,
              COALESCE((SELECT jsonb_object_agg(s.unit, s.total::text)
                          FROM unit_sums s
                         WHERE ${sameGroup}), '{}'::jsonb) AS units
         FROM groups g
        ORDER BY ${order}`,
      params,
    );
    let requests = 0n;
    let spentMicro = 0n;
    let spentUsd = 0n;
    const data = rows.map((row): UsageSummaryRowDto => {
      // Usage entries are negative balance changes; the summary reports what was spent.
      const rowMicro = -BigInt(row.amount_micro);
      const rowUsd = -usdUnits(row.usd);
      requests += BigInt(row.requests);
      spentMicro += rowMicro;
      spentUsd += rowUsd;
      const units = Object.fromEntries(
        Object.entries(row.units)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([unit, total]) => [unit, Number(total)]),
      );
      return {
        day: row.day,
        ...(hourly ? { hour: row.hour ?? undefined } : {}),
        ...(groups.has('model') ? { model: row.model ?? null } : {}),
        ...(groups.has('key') ? { keyId: row.key_id ?? null } : {}),
        requests: Number(row.requests),
        credits: formatMicroCredits(rowMicro),
        usd: formatUsd(rowUsd),
        units,
      };
    });
    return { object: 'list', data, totals: { requests: Number(requests), credits: formatMicroCredits(spentMicro), usd: formatUsd(spentUsd) } };
  }

  private filterConditions(query: UsageFilterQueryDto, conditions: string[], bind: (value: unknown) => string): void {
    if (query.model !== undefined) conditions.push(`model = ${bind(query.model)}`);
    if (query.key !== undefined) conditions.push(`key_id = ${bind(query.key)}`);
  }

  private windowConditions(query: UsageWindowQueryDto, conditions: string[], bind: (value: unknown) => string): void {
    const from = query.from === undefined ? undefined : normalizeInstant(query.from);
    const to = query.to === undefined ? undefined : normalizeInstant(query.to);
    // The DTO validated both; null here would be a bug in the validator, not in the request.
    if (from === null) throw invalidQuery('from', `Expected an ISO 8601 date or time. Received '${query.from}'`);
    if (to === null) throw invalidQuery('to', `Expected an ISO 8601 date or time. Received '${query.to}'`);
    if (from !== undefined && to !== undefined && instantMillis(to) < instantMillis(from)) {
      throw invalidQuery('to', `Expected a time at or after from (${query.from}). Received '${query.to}'`);
    }
    if (from !== undefined) conditions.push(`occurred_at >= ${bind(from)}::timestamptz`);
    if (to !== undefined) conditions.push(`occurred_at < ${bind(to)}::timestamptz`);
  }
}

function toEntry(row: LedgerRow): UsageEntryDto {
  // The ledger keeps signed balance changes; the API shows each entry's amount the way its kind
  // reads (usage: charged, credit: added), so a charge reads the same here and in the summary.
  const sign = row.kind === 'usage' ? -1n : 1n;
  return {
    id: row.id,
    kind: row.kind,
    requestId: row.request_id,
    clientRequestId: row.client_request_id,
    keyId: row.key_id,
    model: row.model,
    endpoint: row.endpoint,
    deployment: row.deployment,
    cache: row.cache,
    cacheSavedUsd: row.cache_saved_usd === null ? null : plainDecimal(row.cache_saved_usd),
    units: row.units,
    credits: formatMicroCredits(sign * BigInt(row.amount_micro)),
    usd: formatUsd(sign * usdUnits(row.usd)),
    catalogueRevision: row.catalogue_revision,
    prices: row.prices,
    reason: row.reason,
    occurredAt: row.occurred_at.toISOString(),
    recordedAt: row.recorded_at.toISOString(),
  };
}

/** A numeric column's text without the trailing zeros of the scale it was sent with. */
function plainDecimal(text: string): string {
  const value = parseDecimal(text);
  return formatScaled(value.units, value.scale);
}
