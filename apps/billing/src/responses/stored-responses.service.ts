import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  packJson,
  STORED_RESPONSE_ID,
  unpackJson,
  type ConversationItems,
  type ConversationQuery,
  type ConversationReply,
  type InputItemsQuery,
  type InputItemsReply,
  type PackedJson,
  type ResponsesItem,
  type SaveStoredResponse,
  type SaveStoredResponseReply,
  type StoredResponseContent,
  type StoredResponseQuery,
  type StoredResponsesOwner,
} from '@igw/contracts';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { DataSource } from 'typeorm';

// Billing's side of stored Responses API responses. Every read is of one account's live rows:
// another account's id, or one past RESPONSES_RETENTION_DAYS, is unknown whether or not the
// purge has deleted it yet.

/** What a save job may inflate to: a body (BODY_LIMIT) plus a non-streamed answer (UPSTREAM_MAX_RESPONSE_BYTES), with room. */
const MAX_CONTENT_BYTES = 96 * 1024 * 1024;
/** Item ids one request may name with item_reference (far above what a body holds). */
const MAX_REFERENCED_ITEMS = 10_000;
/** Item rows one INSERT writes (six parameters each, well under PostgreSQL's 65,535 a statement). */
const ITEMS_PER_INSERT = 2_000;
/** Rows the purge deletes per statement, so it never holds long locks. */
const PURGE_BATCH = 1_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY_MS = 86_400_000;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const itemIdOf = (item: Record<string, unknown>): string => (typeof item.id === 'string' ? item.id : '');

/** A query that could only name rows no account has: answered without a look-up. */
const unknownResponse = (query: StoredResponseQuery): boolean => !UUID.test(query.accountId) || !STORED_RESPONSE_ID.test(query.id) || (query.keyId !== undefined && !UUID.test(query.keyId));

/** The condition on `alias.key_id` that keeps a query to its owner key, as its `index`th parameter (none when the account's keys share). */
const ownerFilter = (owner: StoredResponsesOwner, index: number, alias: string): string => (owner.keyId === undefined ? '' : ` AND ${alias}.key_id = $${index}`);
const ownerParameters = (owner: StoredResponsesOwner): string[] => (owner.keyId === undefined ? [] : [owner.keyId]);

@Injectable()
export class StoredResponsesService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('StoredResponses');
  private purgeTimer: NodeJS.Timeout | undefined;
  private purging: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  onApplicationBootstrap(): void {
    // Every replica purges (deleting the same expired rows twice is harmless); the first run soon after start.
    const run = () => {
      this.purging = this.purgeExpired().then(
        (deleted) => deleted > 0 && this.logger.log(`Deleted ${deleted} stored responses past their retention`),
        (error: unknown) => this.logger.warn(`Purge of expired stored responses failed: ${error instanceof Error ? error.message : String(error)}`),
      );
    };
    this.purgeTimer = setInterval(run, this.settings.env.RESPONSES_PURGE_INTERVAL_MS).unref();
    setImmediate(run).unref?.();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.purgeTimer);
    await this.purging;
  }

  /** Responses created at or before this instant are expired. */
  retentionCutoff(now = Date.now()): Date {
    return new Date(now - this.settings.env.RESPONSES_RETENTION_DAYS * DAY_MS);
  }

  async save(job: SaveStoredResponse): Promise<SaveStoredResponseReply> {
    if (!UUID.test(job.accountId) || !UUID.test(job.keyId) || !STORED_RESPONSE_ID.test(job.id) || (job.previousResponseId !== null && typeof job.previousResponseId !== 'string') || !Number.isFinite(job.createdAt)) {
      throw new Error('responses.save: not a stored response (account, id, previous id or created_at malformed)');
    }
    const content = await unpackJson<StoredResponseContent>(job.content, MAX_CONTENT_BYTES);
    const { input, response } = content;
    if (!Array.isArray(input) || !isRecord(response) || !Array.isArray(response.output) || ![...input, ...response.output].every(isRecord)) {
      throw new Error('responses.save: content is not {input: items[], response: {output: items[]}}');
    }
    const items = [...input.map((item) => ({ item, isOutput: false })), ...response.output.map((item) => ({ item, isOutput: true }))];
    const itemsBytes = items.reduce((sum, { item }) => sum + Buffer.byteLength(JSON.stringify(item)), 0);
    const { output: _output, ...rest } = response;
    const { RESPONSES_MAX_PER_ACCOUNT: maxResponses, RESPONSES_MAX_MB_PER_ACCOUNT: maxMegabytes } = this.settings.env;
    return this.dataSource.transaction(async (manager): Promise<SaveStoredResponseReply> => {
      // The answer waits for this commit: it need not wait for the disk too. Only a crash of the
      // database's machine (not of PostgreSQL) loses the last moment's saves, which their clients
      // still hold; the ledger keeps its synchronous commits.
      await manager.query('SET LOCAL synchronous_commit TO OFF');
      // The account's quota, counted and taken under one lock per account: concurrent saves of one
      // account cannot both pass its last place, and other accounts' saves do not wait.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('billing.responses:' || $1, 0))`, [job.accountId]);
      const [kept] = (await manager.query(
        `SELECT count(*)::integer AS responses, COALESCE(sum(items_bytes), 0)::bigint::text AS bytes FROM billing.responses WHERE account_id = $1 AND created_at > $2`,
        [job.accountId, this.retentionCutoff()],
      )) as Array<{ responses: number; bytes: string }>;
      if (kept.responses >= maxResponses || Number(kept.bytes) + itemsBytes > maxMegabytes * 1024 * 1024) return { saved: false, reason: 'quota', maxResponses, maxMegabytes };
      const inserted = (await manager.query(
        `INSERT INTO billing.responses (id, account_id, key_id, previous_response_id, created_at, response, items_bytes)
         VALUES ($1, $2, $3, $4, to_timestamp($5), $6, $7) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [job.id, job.accountId, job.keyId, job.previousResponseId, job.createdAt, rest, itemsBytes],
      )) as unknown[];
      // A save delivered twice is kept once.
      if (inserted.length === 0 || items.length === 0) return { saved: true };
      // In statements of ITEMS_PER_INSERT rows: one statement takes at most 65,535 parameters (six a
      // row), and a conversation of more items than that failed whole, answered as not stored.
      for (let first = 0; first < items.length; first += ITEMS_PER_INSERT) {
        const columns: unknown[] = [];
        const rows = items.slice(first, first + ITEMS_PER_INSERT).map(({ item, isOutput }, offset) => {
          const at = columns.length;
          columns.push(job.id, first + offset, isOutput, job.accountId, itemIdOf(item), item);
          return `($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6})`;
        });
        await manager.query(`INSERT INTO billing.response_items (response_id, position, is_output, account_id, item_id, item) VALUES ${rows.join(', ')}`, columns);
      }
      return { saved: true };
    });
  }

  /**
   * The turns a previous_response_id continues, oldest first (each one's input, then its
   * output), followed back through the account's live responses: a deleted or expired turn
   * ends the chain there. Items named by id come from any live response of the account (the
   * newest holding that id).
   */
  async conversation(query: ConversationQuery): Promise<ConversationReply> {
    if (!UUID.test(query.accountId) || (query.keyId !== undefined && !UUID.test(query.keyId))) {
      // No account of ours: nothing of it is stored.
      const nothing: ConversationItems = { items: [], referenced: {} };
      return query.previousResponseId === undefined ? { previousFound: true, tooLarge: false, packed: await packJson(nothing) } : { previousFound: false, tooLarge: false, packed: null };
    }
    const cutoff = this.retentionCutoff();
    let items: ResponsesItem[] = [];
    let itemsBytes = 0;
    if (query.previousResponseId !== undefined) {
      if (!STORED_RESPONSE_ID.test(query.previousResponseId)) return { previousFound: false, tooLarge: false, packed: null };
      const chain = (await this.dataSource.query(
        `WITH RECURSIVE chain AS (
           SELECT id, previous_response_id, 0 AS depth, items_bytes::bigint AS total FROM billing.responses latest
            WHERE id = $1 AND account_id = $2 AND created_at > $3${ownerFilter(query, 5, 'latest')}
           UNION ALL
           SELECT r.id, r.previous_response_id, c.depth + 1, c.total + r.items_bytes FROM chain c
             JOIN billing.responses r ON r.id = c.previous_response_id
            WHERE r.account_id = $2 AND r.created_at > $3 AND c.total <= $4${ownerFilter(query, 5, 'r')}
         ) SELECT id, depth, total::text AS total FROM chain`,
        [query.previousResponseId, query.accountId, cutoff, query.maxBytes, ...ownerParameters(query)],
      )) as Array<{ id: string; depth: number; total: string }>;
      if (chain.length === 0) return { previousFound: false, tooLarge: false, packed: null };
      // Each row's total runs back from the newest turn: the oldest turn's is the conversation's.
      itemsBytes = chain.reduce((most, turn) => Math.max(most, Number(turn.total)), 0);
      if (itemsBytes > query.maxBytes) return { previousFound: true, tooLarge: true, packed: null };
      const depthOf = new Map(chain.map((turn) => [turn.id, turn.depth]));
      const rows = (await this.dataSource.query(`SELECT response_id, position, item FROM billing.response_items WHERE response_id = ANY($1)`, [[...depthOf.keys()]])) as Array<{
        response_id: string;
        position: number;
        item: ResponsesItem;
      }>;
      rows.sort((a, b) => depthOf.get(b.response_id)! - depthOf.get(a.response_id)! || a.position - b.position);
      items = rows.map((row) => row.item);
    }
    const referenced: Record<string, ResponsesItem> = {};
    const referencedBytes: Record<string, number> = {};
    const ids = [...new Set(query.itemIds.filter((id) => typeof id === 'string' && id !== ''))].slice(0, MAX_REFERENCED_ITEMS);
    if (ids.length > 0) {
      // Sized before they are read: items that could not fit in maxBytes are never loaded (one
      // large item named many times by a small body stays one item here; the gateway counts it per reference).
      const rows = (await this.dataSource.query(
        `WITH found AS (
           SELECT DISTINCT ON (i.item_id) i.item_id, i.item FROM billing.response_items i JOIN billing.responses r ON r.id = i.response_id
            WHERE i.account_id = $1 AND i.item_id = ANY($2) AND r.created_at > $3${ownerFilter(query, 5, 'r')}
            ORDER BY i.item_id, r.created_at DESC, i.position
         ), sized AS (SELECT item_id, item, SUM(octet_length(item::text)) OVER () AS total FROM found)
         SELECT item_id, CASE WHEN total <= $4 THEN item END AS item FROM sized`,
        [query.accountId, ids, cutoff, query.maxBytes, ...ownerParameters(query)],
      )) as Array<{ item_id: string; item: ResponsesItem | null }>;
      if (rows.some((row) => row.item === null)) return { previousFound: true, tooLarge: true, packed: null };
      for (const row of rows) {
        referenced[row.item_id] = row.item!;
        referencedBytes[row.item_id] = Buffer.byteLength(JSON.stringify(row.item));
      }
    }
    // Sized here, where the rows are read, so the gateway holds the conversation without serializing it again.
    const found: ConversationItems = { items, referenced, ...(items.length > 0 && { itemsBytes }), ...(Object.keys(referencedBytes).length > 0 && { referencedBytes }) };
    return { previousFound: true, tooLarge: false, packed: await packJson(found) };
  }

  /** The response as it was answered, output included; null for an unknown, expired or other account's id. */
  async get(query: StoredResponseQuery): Promise<{ response: PackedJson | null }> {
    if (unknownResponse(query)) return { response: null };
    const rows = (await this.dataSource.query(`SELECT response FROM billing.responses r WHERE id = $1 AND account_id = $2 AND created_at > $3${ownerFilter(query, 4, 'r')}`, [
      query.id,
      query.accountId,
      this.retentionCutoff(),
      ...ownerParameters(query),
    ])) as Array<{ response: Record<string, unknown> }>;
    if (rows.length === 0) return { response: null };
    const output = (await this.dataSource.query(`SELECT item FROM billing.response_items WHERE response_id = $1 AND is_output ORDER BY position`, [query.id])) as Array<{ item: unknown }>;
    return { response: await packJson({ ...rows[0].response, output: output.map((row) => row.item) }) };
  }

  async delete(query: StoredResponseQuery): Promise<{ deleted: boolean }> {
    if (unknownResponse(query)) return { deleted: false };
    const deleted = (await this.dataSource.query(`DELETE FROM billing.responses r WHERE id = $1 AND account_id = $2 AND created_at > $3${ownerFilter(query, 4, 'r')} RETURNING id`, [
      query.id,
      query.accountId,
      this.retentionCutoff(),
      ...ownerParameters(query),
    ])) as [unknown[], number];
    return { deleted: deleted[1] > 0 };
  }

  /** A page of the response's own input items, keyed after an item id as OpenAI's list is. */
  async inputItems(query: InputItemsQuery): Promise<InputItemsReply> {
    if (unknownResponse(query)) return { found: false, items: [], hasMore: false };
    const live = (await this.dataSource.query(`SELECT 1 FROM billing.responses r WHERE id = $1 AND account_id = $2 AND created_at > $3${ownerFilter(query, 4, 'r')}`, [
      query.id,
      query.accountId,
      this.retentionCutoff(),
      ...ownerParameters(query),
    ])) as unknown[];
    if (live.length === 0) return { found: false, items: [], hasMore: false };
    const limit = Math.min(Math.max(Math.trunc(query.limit), 1), 100);
    const ascending = query.order === 'asc';
    let after: number | undefined;
    if (query.after !== undefined) {
      const anchor = (await this.dataSource.query(`SELECT position FROM billing.response_items WHERE response_id = $1 AND NOT is_output AND item_id = $2 ORDER BY position LIMIT 1`, [
        query.id,
        query.after,
      ])) as Array<{ position: number }>;
      // An unknown cursor lists nothing after it, as an exhausted page would.
      if (anchor.length === 0) return { found: true, items: [], hasMore: false };
      after = anchor[0].position;
    }
    const rows = (await this.dataSource.query(
      `SELECT item FROM billing.response_items WHERE response_id = $1 AND NOT is_output
         AND ($2::integer IS NULL OR position ${ascending ? '>' : '<'} $2)
       ORDER BY position ${ascending ? 'ASC' : 'DESC'} LIMIT $3`,
      [query.id, after ?? null, limit + 1],
    )) as Array<{ item: ResponsesItem }>;
    return { found: true, items: rows.slice(0, limit).map((row) => row.item), hasMore: rows.length > limit };
  }

  /** Deletes every response past its retention (their items with them); returns how many. */
  async purgeExpired(now = Date.now()): Promise<number> {
    const cutoff = this.retentionCutoff(now);
    let total = 0;
    for (;;) {
      const result = (await this.dataSource.query(
        `DELETE FROM billing.responses WHERE id IN (SELECT id FROM billing.responses WHERE created_at <= $1 LIMIT ${PURGE_BATCH})`,
        [cutoff],
      )) as [unknown[], number];
      total += result[1];
      if (result[1] < PURGE_BATCH) return total;
    }
  }
}
