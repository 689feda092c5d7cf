import { ApiProperty } from '@nestjs/swagger';

/** The spec's Balance record. */
export class BalanceDto {
  @ApiProperty({ description: 'Total credits tied to the API key', example: 1000 })
  balance!: number;

  @ApiProperty({ description: 'True when balance is below lowBalanceThreshold' })
  lowBalance!: boolean;

  @ApiProperty({ description: 'Threshold for low-balance status', example: 100 })
  lowBalanceThreshold!: number;

  @ApiProperty({ description: 'Date of the request (the current time), ISO 8601' })
  lastUpdated!: string;

  @ApiProperty({ description: 'Whether auto top-up is enabled for the plan', example: 'disabled' })
  autoDebitStatus!: string;

  @ApiProperty({ description: 'Status of the plan tied to the key', example: 'active' })
  status!: string;

  @ApiProperty({ description: 'Longer text explaining status' })
  statusExplanation!: string;
}
