import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { Checked, describeWrongType, describeWrongValue, expectedOneOf, IsNumberField, isRecord, stringIssues } from '@igw/validation';
import { BUDGET_PERIODS, BUDGET_UNITS, MODEL_PATTERN, type BudgetPeriod, type BudgetUnit } from '@igw/domain';
import { ResponseCacheSettingsDto, responseCacheIssues } from '../../cache/dto/response-cache-settings.dto';

/** The largest value of a PostgreSQL integer column. */
const MAX_LIMIT = 2_147_483_647;
export const MAX_METADATA_ENTRIES = 32;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_VALUE_LENGTH = 512;
export const MAX_MODEL_RULES = 100;
/** A budget as an exact decimal: up to 12 digits before the point and 6 after (a micro-credit). */
const BUDGET_LIMIT = /^\d{1,12}(\.\d{1,6})?$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const present = (_: object, value: unknown): boolean => value !== undefined;
const presentAndNotNull = (_: object, value: unknown): boolean => value !== undefined && value !== null;

export class KeyBudgetDto {
  @ApiProperty({ description: 'Exact decimal in `unit` (at most 6 decimal places)', example: '25.00' })
  limit!: string;

  @ApiProperty({ enum: BUDGET_UNITS })
  unit!: BudgetUnit;

  @ApiProperty({ enum: BUDGET_PERIODS, description: 'day and month reset at UTC midnight / the first of the month; lifetime never resets' })
  period!: BudgetPeriod;
}

export function budgetIssues(value: unknown): string[] {
  if (!isRecord(value)) return [`Expected an object {limit, unit, period} or null. Received ${describeWrongType(value)}`];
  const extra = Object.keys(value).filter((field) => !['limit', 'unit', 'period'].includes(field));
  if (extra.length > 0) return [`Expected only limit, unit and period. Received ${extra.slice(0, 5).map((field) => describeWrongValue(field)).join(', ')}`];
  const issues: string[] = [];
  if (typeof value.limit !== 'string' || !BUDGET_LIMIT.test(value.limit)) {
    issues.push(`limit: Expected a decimal string such as "25.00" (up to 12 digits, at most 6 decimal places). Received ${typeof value.limit === 'string' ? describeWrongValue(value.limit) : describeWrongType(value.limit)}`);
  }
  if (typeof value.unit !== 'string' || !BUDGET_UNITS.includes(value.unit as BudgetUnit)) issues.push(`unit: ${expectedOneOf(BUDGET_UNITS, value.unit)}`);
  if (typeof value.period !== 'string' || !BUDGET_PERIODS.includes(value.period as BudgetPeriod)) issues.push(`period: ${expectedOneOf(BUDGET_PERIODS, value.period)}`);
  return issues;
}

export function metadataIssues(value: unknown): string[] {
  if (!isRecord(value)) return [`Expected an object of strings. Received ${describeWrongType(value)}`];
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_ENTRIES) return [`Expected at most ${MAX_METADATA_ENTRIES} entries. Received ${entries.length}`];
  const issues: string[] = [];
  for (const [name, text] of entries) {
    if (name.length === 0 || name.length > MAX_METADATA_KEY_LENGTH) issues.push(`Expected names of 1 to ${MAX_METADATA_KEY_LENGTH} characters. Received ${name.length} characters`);
    else issues.push(...stringIssues(text, { maxLength: MAX_METADATA_VALUE_LENGTH }).map((issue) => `${name}: ${issue}`));
    if (issues.length >= 5) break;
  }
  return issues;
}

export function modelRulesIssues(value: unknown): string[] {
  if (!Array.isArray(value)) return [`Expected an array of model ids, aliases or patterns, or null. Received ${describeWrongType(value)}`];
  if (value.length > MAX_MODEL_RULES) return [`Expected at most ${MAX_MODEL_RULES} models. Received ${value.length}`];
  const issues: string[] = [];
  value.forEach((item: unknown, index) => {
    const problems = stringIssues(item, { pattern: MODEL_PATTERN, patternText: "a model id, alias or pattern (1-200 letters, digits, '.', '_', ':', '@', '/', '+', '-' or '*')" });
    if (problems.length > 0 && issues.length < 5) issues.push(`[${index}]: ${problems[0]}`);
  });
  return issues;
}

export function expiresAtIssues(value: unknown): string[] {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value) || Number.isNaN(Date.parse(value))) {
    return [`Expected an ISO 8601 date and time with its offset, e.g. "2027-01-31T00:00:00Z". Received ${typeof value === 'string' ? describeWrongValue(value.slice(0, 60)) : describeWrongType(value)}`];
  }
  const year = new Date(value).getUTCFullYear();
  return year >= 1970 && year <= 9999 ? [] : [`Expected a year from 1970 to 9999. Received ${year}`];
}

/**
 * A key's own rules, as created with it and changed later: only the fields sent change, and
 * `null` removes a rule. Shared by POST /admin/v1/accounts/:id/keys and PATCH /admin/v1/keys/:id.
 */
export class KeyRulesDto {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'ci pipeline', maxLength: 200 })
  @ValidateIf(presentAndNotNull)
  @Checked('keyName', (value) => stringIssues(value, { maxLength: 200 }))
  name?: string | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `Free-form labels (owner, team, purpose): at most ${MAX_METADATA_ENTRIES} entries, names up to ${MAX_METADATA_KEY_LENGTH} and values up to ${MAX_METADATA_VALUE_LENGTH} characters. Replaces the whole set.`,
    example: { owner: 'ana@example.com', team: 'search' },
  })
  @ValidateIf(present)
  @Checked('keyMetadata', metadataIssues)
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ type: KeyBudgetDto, nullable: true, description: 'What the key may spend per period; null removes the budget' })
  @ValidateIf(presentAndNotNull)
  @Checked('keyBudget', budgetIssues)
  budget?: KeyBudgetDto | null;

  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    description: 'Model ids, aliases or patterns (`anthropic/*`) the key may call; null: every model',
    example: ['anthropic/*', 'gpt-4.1-mini'],
  })
  @ValidateIf(presentAndNotNull)
  @Checked('keyModels', modelRulesIssues)
  models?: string[] | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_LIMIT, description: "The key's requests per minute; the account's limit applies when lower" })
  @ValidateIf(presentAndNotNull)
  @IsNumberField({ integer: true, min: 1, max: MAX_LIMIT })
  rpm?: number | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_LIMIT, description: "The key's requests in flight at once; the account's limit applies when lower" })
  @ValidateIf(presentAndNotNull)
  @IsNumberField({ integer: true, min: 1, max: MAX_LIMIT })
  concurrency?: number | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'From then on the key is refused with 401; null: never expires' })
  @ValidateIf(presentAndNotNull)
  @Checked('keyExpiresAt', expiresAtIssues)
  expiresAt?: string | null;

  @ApiPropertyOptional({
    type: ResponseCacheSettingsDto,
    nullable: true,
    description: "The key's response cache setting, over its account's (a field left out is the account's), replaced as a whole; null removes it",
    example: { enabled: true, ttlSeconds: 600, scope: 'account' },
  })
  @ValidateIf(presentAndNotNull)
  @Checked('responseCache', responseCacheIssues)
  cache?: ResponseCacheSettingsDto | null;
}

export class KeySpendDto {
  @ApiProperty({ enum: BUDGET_PERIODS }) period!: BudgetPeriod;
  @ApiProperty({ description: "Spent in the current period, an exact decimal in the budget's unit", example: '3.25' }) spent!: string;
  @ApiProperty({ description: 'Start of the current period (UTC)' }) periodStart!: string;
  @ApiProperty({ nullable: true, type: String, description: 'When the period ends and the spend starts again at 0; null for lifetime' }) resetsAt!: string | null;
}
