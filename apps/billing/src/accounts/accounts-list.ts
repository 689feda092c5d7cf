import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccountDto } from './dto/account.dto';
import type { AccountEntity } from './account.entity';
import { decodeAccountCursor, encodeAccountCursor, UUID } from './account-cursor';
import { DEFAULT_ACCOUNTS_PAGE_SIZE, type AccountListDto, type ListAccountsQueryDto } from './dto/list-accounts.dto';

interface AccountRow {
  id: string;
  name: string;
  plan: AccountEntity['plan'];
  balance_micro: string;
  low_balance_threshold_micro: string;
  status: AccountEntity['status'];
  auto_debit: AccountEntity['autoDebit'];
  rate_limit_rpm: number | null;
  rate_limit_concurrency: number | null;
  created_at: Date;
  updated_at: Date;
  cursor_time: string;
}

/** `%`, `_` and `\` match themselves in the search text, not as LIKE wildcards. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (character) => `\\${character}`);

/** The accounts of the admin list: newest first, searched by name or id, a page at a time. */
@Injectable()
export class AccountsListService {
  constructor(private readonly dataSource: DataSource) {}

  async list(query: ListAccountsQueryDto): Promise<AccountListDto> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const bind = (value: unknown): string => `$${params.push(value)}`;
    const search = query.search?.trim();
    if (search) {
      const byName = `name ILIKE ${bind(`%${likeLiteral(search)}%`)}`;
      conditions.push(UUID.test(search) ? `(${byName} OR id = ${bind(search.toLowerCase())}::uuid)` : byName);
    }
    if (query.status !== undefined) conditions.push(`status = ${bind(query.status)}`);
    if (query.plan !== undefined) conditions.push(`plan = ${bind(query.plan)}`);
    if (query.cursor !== undefined) {
      // The DTO validated it; a null here cannot come from a request that passed validation.
      const cursor = decodeAccountCursor(query.cursor)!;
      conditions.push(`(created_at, id) < (${bind(cursor.createdAt)}::timestamptz, ${bind(cursor.id)}::uuid)`);
    }
    const limit = query.limit ?? DEFAULT_ACCOUNTS_PAGE_SIZE;
    const rows: AccountRow[] = await this.dataSource.query(
      `SELECT id, name, plan, balance_micro, low_balance_threshold_micro, status, auto_debit, rate_limit_rpm, rate_limit_concurrency, created_at, updated_at,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_time
         FROM "billing"."accounts"
        ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY created_at DESC, id DESC
        LIMIT ${bind(limit + 1)}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      object: 'list',
      data: page.map((row) =>
        AccountDto.from({
          id: row.id,
          name: row.name,
          plan: row.plan,
          balanceMicro: row.balance_micro,
          lowBalanceThresholdMicro: row.low_balance_threshold_micro,
          status: row.status,
          autoDebit: row.auto_debit,
          rateLimitRpm: row.rate_limit_rpm,
          rateLimitConcurrency: row.rate_limit_concurrency,
          createdAt: row.created_at,
          updatedAt: row.updated_at,
        } as AccountEntity),
      ),
      nextCursor: rows.length > limit && last ? encodeAccountCursor({ createdAt: last.cursor_time, id: last.id }) : null,
    };
  }
}
