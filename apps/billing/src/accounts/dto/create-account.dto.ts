import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { Checked, IsNumberField } from '@igw/validation';
import type { AccountPlan } from '@igw/contracts';
import { ResponseCacheSettingsDto, responseCacheIssues } from '../../cache/dto/response-cache-settings.dto';
import { IsUsdInsteadOfCredits, usdPresent } from './usd-amount';
import { CREDIT_DECIMALS, DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS, DEFAULT_PLAN_DESCRIPTION, MAX_ADMIN_CREDITS } from '../../billing.constants';

const presentAndNotNull = (_: object, value: unknown): boolean => value !== undefined && value !== null;

export class CreateAccountDto {
  @ApiPropertyOptional({ example: 'Acme research' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ description: 'Opening credits (at most 6 decimal places)', minimum: 0, maximum: MAX_ADMIN_CREDITS, default: 0, example: 20_000_000 })
  @IsOptional()
  @IsNumberField({ min: 0, max: MAX_ADMIN_CREDITS, maxDecimals: CREDIT_DECIMALS })
  credits?: number;

  @ApiPropertyOptional({ description: 'Opening balance in USD instead of credits, converted exactly at CREDITS_PER_USD', minimum: 0, example: 10 })
  @ValidateIf(usdPresent)
  @IsUsdInsteadOfCredits()
  usd?: number;

  @ApiPropertyOptional({ enum: ['free', 'paid'], description: `free: at most the free hourly request limit; paid: limited by credits only. Default: ${DEFAULT_PLAN_DESCRIPTION}` })
  @IsOptional()
  @IsIn(['free', 'paid'])
  plan?: AccountPlan;

  @ApiPropertyOptional({ description: 'Credits below which the balance is reported low', minimum: 0, maximum: MAX_ADMIN_CREDITS, default: DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS })
  @IsOptional()
  @IsNumberField({ min: 0, max: MAX_ADMIN_CREDITS, maxDecimals: CREDIT_DECIMALS })
  lowBalanceThreshold?: number;

  @ApiPropertyOptional({
    type: ResponseCacheSettingsDto,
    nullable: true,
    description: "The response cache for the account's keys (each key's own setting over it); null or absent: off",
    example: { enabled: true, ttlSeconds: 600, scope: 'account' },
  })
  @ValidateIf(presentAndNotNull)
  @Checked('responseCache', responseCacheIssues)
  cache?: ResponseCacheSettingsDto | null;
}
