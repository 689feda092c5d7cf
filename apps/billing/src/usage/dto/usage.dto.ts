import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ChargedPriceDto {
  @ApiProperty({ example: 'input_tokens' }) unit!: string;
  @ApiProperty({ description: 'USD per `per` units', example: 0.15 }) price!: number;
  @ApiProperty({ example: 1_000_000 }) per!: number;
}

const UNITS_SCHEMA = {
  type: 'object',
  additionalProperties: { type: 'integer' },
  example: { input_tokens: 1200, output_tokens: 340 },
} as const;

export class UsageEntryDto {
  @ApiProperty({ description: 'Ledger entry id', example: '4711' }) id!: string;
  @ApiProperty({ enum: ['usage', 'credit'] }) kind!: 'usage' | 'credit';
  @ApiProperty({ nullable: true, type: String, description: "The gateway's request id (usage only)" }) requestId!: string | null;
  @ApiProperty({ nullable: true, type: String, description: "The client's X-Client-Request-Id, when it sent a well-formed one (usage only)", example: 'checkout-7f3a' })
  clientRequestId!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'API key that made the request (usage only)' }) keyId!: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'openai/gpt-4o-mini' }) model!: string | null;
  @ApiProperty({ nullable: true, type: String, example: 'chat.completions' }) endpoint!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The deployment that served the request, `<connection>/<upstream>` (usage only; null for usage recorded before gateways reported it)',
    example: 'azure-eastus/gpt-4o-prod',
  })
  deployment!: string | null;
  @ApiProperty({
    nullable: true,
    enum: ['hit', 'miss'],
    description: 'hit: answered from the response cache and charged at the cache prices in `prices`; miss: looked up there, not found, and stored; null: the cache was not asked (and for credits)',
  })
  cache!: 'hit' | 'miss' | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "For a hit: what the same units cost at the model's full prices minus what was charged, USD, exact decimal string; null otherwise",
    example: '0.00042',
  })
  cacheSavedUsd!: string | null;
  @ApiProperty({ ...UNITS_SCHEMA, nullable: true, description: 'Metered units by name (usage only)' }) units!: Record<string, number> | null;
  @ApiProperty({
    description: 'Credits as an exact decimal string: what a usage entry charged (as in the summary), what a credit entry added (negative for a correction)',
    example: '0.54',
  })
  credits!: string;
  @ApiProperty({ description: 'The same amount in USD, exact decimal string', example: '0.00000027' }) usd!: string;
  @ApiProperty({ nullable: true, type: 'integer', description: 'Catalogue revision whose prices were applied' }) catalogueRevision!: number | null;
  @ApiProperty({ nullable: true, type: [ChargedPriceDto], description: 'The prices the usage was charged at' }) prices!: ChargedPriceDto[] | null;
  @ApiProperty({ nullable: true, type: String, description: 'Why credits were added or removed (credit only)' }) reason!: string | null;
  @ApiProperty({ description: 'When the request happened (usage) or the credit was given, ISO 8601' }) occurredAt!: string;
  @ApiProperty({ description: 'When the ledger recorded the entry, ISO 8601' }) recordedAt!: string;
}

export class UsageListDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [UsageEntryDto], description: 'Newest first' }) data!: UsageEntryDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next (older) page; null on the last page' })
  nextCursor!: string | null;
}

export class UsageSummaryRowDto {
  @ApiProperty({ description: 'UTC day', example: '2025-01-31' }) day!: string;
  @ApiPropertyOptional({ description: 'UTC hour the row covers (granularity=hour only)', example: '2025-01-31T13:00:00Z' }) hour?: string;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'The model (when grouped by model)', example: 'openai/gpt-4o-mini' }) model?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid', description: 'The API key (when grouped by key)' }) keyId?: string | null;
  @ApiProperty({ type: 'integer', description: 'Number of usage entries (billed requests)' }) requests!: number;
  @ApiProperty({ description: 'Credits charged, exact decimal string', example: '12.5' }) credits!: string;
  @ApiProperty({ description: 'USD charged, exact decimal string', example: '0.00000625' }) usd!: string;
  @ApiProperty({ ...UNITS_SCHEMA, description: 'Metered units summed by name' }) units!: Record<string, number>;
}

export class UsageTotalsDto {
  @ApiProperty({ type: 'integer' }) requests!: number;
  @ApiProperty({ description: 'Credits charged, exact decimal string' }) credits!: string;
  @ApiProperty({ description: 'USD charged, exact decimal string' }) usd!: string;
}

export class UsageSummaryDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [UsageSummaryRowDto], description: 'One row per period (UTC day or hour) and group (model and/or key, as asked), oldest period first, then by model and key' }) data!: UsageSummaryRowDto[];
  @ApiProperty({ type: UsageTotalsDto }) totals!: UsageTotalsDto;
}
