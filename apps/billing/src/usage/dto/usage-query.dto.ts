import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength, MinLength, ValidateBy, type ValidationArguments } from 'class-validator';
import { expectedOneOf, IsNumberField } from '@igw/contracts';
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

export class ListUsageQueryDto extends UsageWindowQueryDto {
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

export class UsageSummaryQueryDto extends UsageWindowQueryDto {}
