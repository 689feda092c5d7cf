import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { IsNumberField } from '@igw/validation';
import type { AccountPlan } from '@igw/contracts';
import { IsUsdInsteadOfCredits, usdPresent } from './usd-amount';
import { CREDIT_DECIMALS, DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS, DEFAULT_PLAN_DESCRIPTION, MAX_ADMIN_CREDITS } from '../../billing.constants';

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
}
