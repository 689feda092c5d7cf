import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, NotEquals, ValidateIf } from 'class-validator';
import { IsNumberField } from '@igw/validation';
import { IsUsdInsteadOfCredits, usdAbsent, usdPresent } from './usd-amount';
import { CREDIT_DECIMALS, MAX_ADMIN_CREDITS } from '../../billing.constants';

export class AddCreditsDto {
  @ApiPropertyOptional({ description: 'Credits to add; negative for a correction (at most 6 decimal places). Send credits or usd.', minimum: -MAX_ADMIN_CREDITS, maximum: MAX_ADMIN_CREDITS, example: 20_000_000 })
  @ValidateIf(usdAbsent)
  @IsNumberField({ min: -MAX_ADMIN_CREDITS, max: MAX_ADMIN_CREDITS, maxDecimals: CREDIT_DECIMALS })
  @NotEquals(0, { message: 'Expected a number other than 0' })
  credits?: number;

  @ApiPropertyOptional({ description: 'The amount in USD instead of credits, converted exactly at CREDITS_PER_USD (it must come to a whole number of micro-credits)', example: 10 })
  @ValidateIf(usdPresent)
  @IsUsdInsteadOfCredits()
  @NotEquals(0, { message: 'Expected a number other than 0' })
  usd?: number;

  @ApiPropertyOptional({ example: 'monthly top-up' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class BalanceAfterCreditDto {
  @ApiProperty({ description: 'Balance in credits after the change' })
  balance!: number;
}
