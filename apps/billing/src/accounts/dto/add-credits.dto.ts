import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNumber, IsOptional, IsString, MaxLength, NotEquals } from 'class-validator';

export class AddCreditsDto {
  @ApiProperty({ description: 'Credits to add; negative for a correction', example: 500 })
  @IsNumber({ maxDecimalPlaces: 6 })
  @NotEquals(0)
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
