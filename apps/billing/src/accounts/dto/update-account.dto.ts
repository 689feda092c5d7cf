import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength, ValidateIf } from 'class-validator';
import { Checked, IsNumberField } from '@igw/validation';
import type { AccountPlan, AccountStatus } from '@igw/contracts';
import { CREDIT_DECIMALS, MAX_ADMIN_CREDITS } from '../../billing.constants';
import { ResponseCacheSettingsDto, responseCacheIssues } from '../../cache/dto/response-cache-settings.dto';
import type { AutoDebitStatus } from '../account.entity';

/** The largest value of a PostgreSQL integer column. */
const MAX_LIMIT = 2_147_483_647;

/** Present (even as null) means "validate it": only the limit overrides and the cache may be null. */
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

  @ApiPropertyOptional({ description: 'Credits below which the balance is reported low', minimum: 0, maximum: MAX_ADMIN_CREDITS, example: 100 })
  @ValidateIf(present)
  @IsNumberField({ min: 0, max: MAX_ADMIN_CREDITS, maxDecimals: CREDIT_DECIMALS })
  lowBalanceThreshold?: number;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_LIMIT,
    description: "Requests per minute per API key of the account; null removes the override (the gateway's default applies)",
    example: 120,
  })
  @ValidateIf(presentAndNotNull)
  @IsNumberField({ integer: true, min: 1, max: MAX_LIMIT })
  requestsPerMinute?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_LIMIT,
    description: "Requests in flight at once per API key of the account; null removes the override (the gateway's default applies)",
    example: 4,
  })
  @ValidateIf(presentAndNotNull)
  @IsNumberField({ integer: true, min: 1, max: MAX_LIMIT })
  concurrentRequests?: number | null;

  @ApiPropertyOptional({
    type: ResponseCacheSettingsDto,
    nullable: true,
    description: "The response cache for the account's keys, replaced as a whole; null removes it (off)",
    example: { enabled: true, ttlSeconds: 600, scope: 'account' },
  })
  @ValidateIf(presentAndNotNull)
  @Checked('responseCache', responseCacheIssues)
  cache?: ResponseCacheSettingsDto | null;
}
