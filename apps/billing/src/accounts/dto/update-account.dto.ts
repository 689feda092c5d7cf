import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsNumber, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import type { AccountPlan, AccountStatus } from '@igw/contracts';
import type { AutoDebitStatus } from '../account.entity';

/** The largest value of a PostgreSQL integer column. */
const MAX_LIMIT = 2_147_483_647;
/** Far above any real threshold, and well inside the bigint micro-credit column. */
const MAX_THRESHOLD_CREDITS = 1_000_000_000_000;

/** Present (even as null) means "validate it": only the limit overrides may be null. */
const present = (_: object, value: unknown): boolean => value !== undefined;
const presentAndNotNull = (_: object, value: unknown): boolean => value !== undefined && value !== null;

/** Every field is optional; only the fields sent change. */
export class UpdateAccountDto {
  @ApiPropertyOptional({ example: 'Acme research', maxLength: 200 })
  @ValidateIf(present)
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ enum: ['free', 'paid'] })
  @ValidateIf(present)
  @IsIn(['free', 'paid'])
  plan?: AccountPlan;

  @ApiPropertyOptional({ enum: ['active', 'suspended'], description: 'A suspended account is refused on every paid endpoint' })
  @ValidateIf(present)
  @IsIn(['active', 'suspended'])
  status?: AccountStatus;

  @ApiPropertyOptional({ enum: ['enabled', 'disabled'] })
  @ValidateIf(present)
  @IsIn(['enabled', 'disabled'])
  autoDebitStatus?: AutoDebitStatus;

  @ApiPropertyOptional({ description: 'Credits below which the balance is reported low', minimum: 0, example: 100 })
  @ValidateIf(present)
  @IsNumber({ maxDecimalPlaces: 6 })
  @Min(0)
  @Max(MAX_THRESHOLD_CREDITS)
  lowBalanceThreshold?: number;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    description: "Requests per minute per API key of the account; null removes the override (the gateway's default applies)",
    example: 120,
  })
  @ValidateIf(presentAndNotNull)
  @IsInt()
  @Min(1)
  @Max(MAX_LIMIT)
  requestsPerMinute?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    description: "Requests in flight at once per API key of the account; null removes the override (the gateway's default applies)",
    example: 4,
  })
  @ValidateIf(presentAndNotNull)
  @IsInt()
  @Min(1)
  @Max(MAX_LIMIT)
  concurrentRequests?: number | null;
}
