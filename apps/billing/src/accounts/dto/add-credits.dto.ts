import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, NotEquals } from 'class-validator';
import { IsNumberField } from '@igw/contracts';
import { CREDIT_DECIMALS, MAX_ADMIN_CREDITS } from '../../billing.constants';

export class AddCreditsDto {
  @ApiProperty({ description: 'Credits to add; negative for a correction (at most 6 decimal places)', minimum: -MAX_ADMIN_CREDITS, maximum: MAX_ADMIN_CREDITS, example: 500 })
  @IsNumberField({ min: -MAX_ADMIN_CREDITS, max: MAX_ADMIN_CREDITS, maxDecimals: CREDIT_DECIMALS })
  @NotEquals(0, { message: 'Expected a number other than 0' })
  credits!: number;

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
