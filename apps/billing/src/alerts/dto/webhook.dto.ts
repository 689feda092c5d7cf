import { ApiProperty } from '@nestjs/swagger';

/** An account's webhook as the admin API shows it: never the secret, only that one is set. */
export class WebhookDto {
  @ApiProperty() accountId!: string;
  @ApiProperty({ example: 'https://hooks.example.com/gateway' }) url!: string;
  @ApiProperty({ description: 'Always true: a webhook cannot exist without its secret, which is never shown' }) secretSet!: boolean;
  @ApiProperty({ type: 'string', nullable: true, description: 'Credits, exact decimal; null: no balance alert', example: '1000000' })
  balanceThreshold!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The same in USD, exact decimal', example: '0.5' })
  balanceThresholdUsd!: string | null;
  @ApiProperty({ enum: ['balance.below_threshold', 'key.budget_threshold', 'key.budget_exhausted'], isArray: true, description: 'The events sent to it' })
  events!: string[];
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

export class WebhookEventDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['balance.below_threshold', 'key.budget_threshold', 'key.budget_exhausted'] }) type!: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed', 'discarded'], description: 'pending: being delivered or waiting for a retry; failed: every attempt failed; discarded: the webhook was removed first' })
  status!: string;
  @ApiProperty({ description: 'Attempts made so far' }) attempts!: number;
  @ApiProperty({ type: 'integer', nullable: true, description: "The receiver's HTTP status at the last attempt" }) lastStatus!: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Why the last attempt failed' }) lastError!: string | null;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ type: 'string', nullable: true }) deliveredAt!: string | null;
  @ApiProperty({ description: 'The body as sent (and signed)', type: 'object', additionalProperties: true }) payload!: Record<string, unknown>;
}
