import { ApiProperty } from '@nestjs/swagger';
import type { BalanceMismatch, KeySpendMismatch, ReconciliationReport, UsageTotalMismatch } from '../reconciliation';

export class BalanceMismatchDto implements BalanceMismatch {
  @ApiProperty() accountId!: string;
  @ApiProperty({ description: "The account's stored balance, in credits" }) balance!: number;
  @ApiProperty({ description: "The sum of the account's ledger entries, in credits" }) ledger!: number;
  @ApiProperty({ description: 'balance - ledger, in credits' }) difference!: number;
  @ApiProperty({ description: 'The stored balance in micro-credits, exact', example: '1000000' }) balanceMicro!: string;
  @ApiProperty({ description: 'The ledger sum in micro-credits, exact', example: '999999' }) ledgerMicro!: string;
  @ApiProperty({ description: 'balance - ledger in micro-credits, exact', example: '1' }) differenceMicro!: string;
}

export class UsageTotalMismatchDto implements UsageTotalMismatch {
  @ApiProperty() accountId!: string;
  @ApiProperty({ description: "The account's stored total of usage charges, micro-credits", example: '27000001' }) usageSpentMicro!: string;
  @ApiProperty({ description: 'The charges of its usage ledger entries, micro-credits', example: '27000000' }) ledgerUsageMicro!: string;
}

export class KeySpendMismatchDto implements KeySpendMismatch {
  @ApiProperty() keyId!: string;
  @ApiProperty({ description: "The key's stored spend in its budget's period, micro-credits" }) spentMicro!: string;
  @ApiProperty({ description: 'The charges of its usage entries in that period, micro-credits' }) ledgerSpentMicro!: string;
  @ApiProperty({ description: "The key's stored total of usage charges, micro-credits" }) usageAppliedMicro!: string;
  @ApiProperty({ description: 'The charges of all its usage entries, micro-credits' }) ledgerUsageMicro!: string;
}

export class ReconciliationReportDto implements ReconciliationReport {
  @ApiProperty({ type: 'integer', description: 'Accounts checked' }) accounts!: number;
  @ApiProperty({ type: [BalanceMismatchDto], description: 'Accounts whose balance is not the sum of their ledger entries; empty when all agree' })
  mismatches!: BalanceMismatchDto[];
  @ApiProperty({
    type: [UsageTotalMismatchDto],
    description: 'Accounts whose running usage total (which gateways count unapplied spending against) is not the sum of their usage entries; empty when all agree',
  })
  usageMismatches!: UsageTotalMismatchDto[];
  @ApiProperty({ type: [KeySpendMismatchDto], description: "Keys whose spend in their budget's period, or usage total, is not the sum of their usage entries; empty when all agree" })
  keyMismatches!: KeySpendMismatchDto[];
  @ApiProperty({ description: 'When the checked snapshot was taken, ISO 8601' }) checkedAt!: string;
}
