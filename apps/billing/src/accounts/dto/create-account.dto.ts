import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNumber, IsOptional, IsString, MaxLength, Min } from 'class-validator';
import type { AccountPlan } from '@igw/contracts';
import { DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS, DEFAULT_PLAN } from '../../billing.constants';

export class CreateAccountDto {
  @ApiPropertyOptional({ example: 'Acme research' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ description: 'Opening credits', minimum: 0, default: 0, example: 1000 })
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 6 })
  @Min(0)
  credits?: number;

  @ApiPropertyOptional({ enum: ['free', 'paid'], default: DEFAULT_PLAN })
  @IsOptional()
  @IsIn(['free', 'paid'])
  plan?: AccountPlan;

  @ApiPropertyOptional({ description: 'Credits below which the balance is reported low', minimum: 0, default: DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS })
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 6 })
  @Min(0)
  lowBalanceThreshold?: number;
}
