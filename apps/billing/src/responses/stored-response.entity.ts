import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AccountEntity } from '../accounts/account.entity';

/**
 * A Responses API response kept with `store: true` (what `previous_response_id` continues and
 * `GET /v1/responses/{id}` shows), until RESPONSES_RETENTION_DAYS after `created_at`. Its input
 * and output items are rows of `response_items`; this row holds the rest of the answer.
 */
@Entity({ name: 'responses' })
@Index(['createdAt'])
// What an account keeps (its quota, counted at each save) is read through this index.
@Index(['accountId', 'createdAt'])
export class StoredResponseEntity {
  /** `resp_…`, as the gateway answered it. */
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: AccountEntity;

  /**
   * The API key that made it: only that key reads, continues and deletes it unless the operator
   * shares stored responses between an account's keys (RESPONSES_SHARED_PER_ACCOUNT).
   */
  @Column({ name: 'key_id', type: 'uuid', nullable: true })
  keyId!: string | null;

  /** The response this one continued: the conversation before it is that one's chain. */
  @Column({ name: 'previous_response_id', type: 'text', nullable: true })
  previousResponseId!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** The answer as sent, without its `output` (those are items). */
  @Column({ type: 'jsonb' })
  response!: Record<string, unknown>;

  /** The JSON size of its input and output items: what continuing it adds to a conversation. */
  @Column({ name: 'items_bytes', type: 'integer' })
  itemsBytes!: number;
}

/** One input or output item of a stored response, findable by its id for `item_reference`. */
@Entity({ name: 'response_items' })
@Index(['accountId', 'itemId'])
export class StoredResponseItemEntity {
  @PrimaryColumn({ name: 'response_id', type: 'text' })
  responseId!: string;

  @ManyToOne(() => StoredResponseEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'response_id' })
  storedResponse?: StoredResponseEntity;

  /** The item's place among the response's items: its input items first, then its output. */
  @PrimaryColumn({ type: 'integer' })
  position!: number;

  @Column({ name: 'is_output', type: 'boolean' })
  isOutput!: boolean;

  /** Copied from the response, so an account's items are found by id through one index. */
  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @Column({ name: 'item_id', type: 'text' })
  itemId!: string;

  @Column({ type: 'jsonb' })
  item!: Record<string, unknown>;
}
