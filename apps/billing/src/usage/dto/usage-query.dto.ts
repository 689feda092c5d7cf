import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength, MinLength, ValidateBy, type ValidationArguments } from 'class-validator';
import { expectedOneOf, IsNumberField } from '@igw/validation';
import type { LedgerEntryKind } from '../../ledger/ledger-entry.entity';
import { normalizeInstant } from '../instant';
import { decodeUsageCursor } from '../usage-cursor';

export const DEFAULT_USAGE_PAGE_SIZE = 100;
export const MAX_USAGE_PAGE_SIZE = 1000;
const LEDGER_KINDS: readonly LedgerEntryKind[] = ['usage', 'credit'];

/** Query strings arrive as text: a whole number becomes a number, anything else stays for the validator to name. */
const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value);

function IsInstant(): PropertyDecorator {
  return ValidateBy({
    name: 'isInstant',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && normalizeInstant(value) !== null,
      defaultMessage: () => 'Expected an ISO 8601 date or time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z (UTC unless an offset is given)',
    },
  });
}

function IsUsageCursor(): PropertyDecorator {
  return ValidateBy({
    name: 'isUsageCursor',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && decodeUsageCursor(value) !== null,
      defaultMessage: () => 'Expected the nextCursor of a previous page',
    },
  });
}

/** The time window shared by the listing and the summary: `from` inclusive, `to` exclusive, on occurred_at. */
export class UsageWindowQueryDto {
  @ApiPropertyOptional({ description: 'Entries that occurred at or after this time (ISO 8601; UTC unless an offset is given)', example: '2025-01-01T00:00:00Z' })
  @IsOptional()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({ description: 'Entries that occurred before this time (exclusive; ISO 8601; UTC unless an offset is given)', example: '2025-02-01T00:00:00Z' })
  @IsOptional()
  @IsInstant()
  to?: string;
}

/** The window plus the model and key filters the listing and the summary share. */
export class UsageFilterQueryDto extends UsageWindowQueryDto {
  @ApiPropertyOptional({ description: 'Only entries of this model id (exact match)', example: 'openai/gpt-4o-mini' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(300)
  model?: string;

  @ApiPropertyOptional({ description: 'Only entries of this API key id', format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'Expected an API key id (a UUID)' })
  key?: string;
}

export class ListUsageQueryDto extends UsageFilterQueryDto {

  @ApiPropertyOptional({ enum: LEDGER_KINDS, description: 'Only usage (charges) or only credit (top-ups, corrections) entries; both when absent' })
  @IsOptional()
  @IsIn(LEDGER_KINDS, { message: (args: ValidationArguments) => expectedOneOf(LEDGER_KINDS, args.value) })
  kind?: LedgerEntryKind;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_USAGE_PAGE_SIZE, default: DEFAULT_USAGE_PAGE_SIZE, description: 'Entries per page' })
  @IsOptional()
  @Transform(toInteger)
  @IsNumberField({ integer: true, min: 1, max: MAX_USAGE_PAGE_SIZE })
  limit?: number;

  @ApiPropertyOptional({ description: "The previous page's nextCursor; leave out for the first (newest) page" })
  @IsOptional()
  @IsUsageCursor()
  cursor?: string;
}

export const USAGE_GROUPS = ['model', 'key'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
export const USAGE_GRANULARITIES = ['day', 'hour'] as const;
export type UsageGranularity = (typeof USAGE_GRANULARITIES)[number];

/** `model,key` (or the parameter repeated) as a list; anything else stays for the validator to name. */
const toGroupList = ({ value }: { value: unknown }): unknown => {
  const parts = Array.isArray(value) ? value : typeof value === 'string' ? [value] : undefined;
  if (!parts || !parts.every((part) => typeof part === 'string')) return value;
  return (parts as string[]).flatMap((part) => part.split(',')).map((part) => part.trim());
};

function IsUsageGroupList(): PropertyDecorator {
  return ValidateBy({
    name: 'isUsageGroupList',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) && value.length <= USAGE_GROUPS.length && value.every((part) => part === '' || (USAGE_GROUPS as readonly unknown[]).includes(part)),
      defaultMessage: (args?: ValidationArguments) =>
        `Expected a comma-separated list of ${USAGE_GROUPS.map((group) => `'${group}'`).join(' and ')} (or empty for totals per period only). Received '${String(args?.value)}'`,
    },
  });
}

export class UsageSummaryQueryDto extends UsageFilterQueryDto {
  @ApiPropertyOptional({
    type: 'string',
    description:
      'What each row is grouped by besides the period: a comma-separated list of model and key (empty: one row per period). ' +
      'Rows carry `model` when grouped by model and `keyId` when grouped by key.',
    default: 'model',
    example: 'model,key',
  })
  @IsOptional()
  @Transform(toGroupList)
  @IsUsageGroupList()
  groupBy?: string[];

  @ApiPropertyOptional({ enum: USAGE_GRANULARITIES, default: 'day', description: 'Length of each period: a UTC day, or a UTC hour (rows then carry `hour`)' })
  @IsOptional()
  @IsIn(USAGE_GRANULARITIES, { message: (args: ValidationArguments) => expectedOneOf(USAGE_GRANULARITIES, args.value) })
  granularity?: UsageGranularity;
}
