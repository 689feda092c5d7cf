import { Controller, Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { BalanceDto } from '@igw/contracts';
import { microToCredits } from '@igw/domain';
import { RequireApiKey } from '@igw/http';
import type { Request } from 'express';
import { AccountsService } from '../accounts/accounts.service';
import type { AccountEntity } from '../accounts/account.entity';
import { KeysService } from '../keys/keys.service';

/** The calling key's budget beside the account's balance. */
export class KeyBudgetStatusDto {
  @ApiProperty() id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ nullable: true, type: String, description: "The key's budget, an exact decimal in `unit`; null: no budget (the account's credits are the only limit)", example: '25.00' })
  limit!: string | null;
  @ApiProperty({ nullable: true, enum: ['usd', 'credits'] }) unit!: 'usd' | 'credits' | null;
  @ApiProperty({ nullable: true, enum: ['day', 'month', 'lifetime'] }) period!: 'day' | 'month' | 'lifetime' | null;
  @ApiProperty({ nullable: true, type: String, description: 'Spent in the current period, exact decimal in `unit`', example: '3.25' }) spent!: string | null;
  @ApiProperty({ nullable: true, type: String }) periodStart!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'When the spend starts again at 0; null for lifetime or without a budget' }) resetsAt!: string | null;
}

export class BalanceWithKeyDto extends BalanceDto {
  @ApiProperty({ type: KeyBudgetStatusDto, description: 'The calling key: its budget, what it spent in the period and when that resets' })
  key!: KeyBudgetStatusDto;
}

@ApiTags('billing')
@Controller('v1/billing')
export class BalanceController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly keys: KeysService,
  ) {}

  /** The credits behind the calling API key (works at zero balance, so clients can see why they get 403). */
  @Get('balance')
  @ApiOperation({ summary: "The calling key's account balance, in credits" })
  @RequireApiKey({ credits: false })
  @ApiOkResponse({ type: BalanceWithKeyDto })
  async balance(@Req() request: Request): Promise<BalanceWithKeyDto> {
    const auth = request.context.auth!;
    const [account, key] = await Promise.all([this.accounts.get(auth.accountId), this.keys.get(auth.keyId)]);
    const now = new Date();
    const spend = key.spend;
    return {
      ...toBalance(account, now),
      key: {
        id: key.id,
        name: key.name,
        limit: key.budget?.limit ?? null,
        unit: key.budget?.unit ?? null,
        period: key.budget?.period ?? null,
        spent: spend?.spent ?? null,
        periodStart: spend?.periodStart ?? null,
        resetsAt: spend?.resetsAt ?? null,
      },
    };
  }
}

export function toBalance(account: AccountEntity, now: Date): BalanceDto {
  const balanceMicro = BigInt(account.balanceMicro);
  const thresholdMicro = BigInt(account.lowBalanceThresholdMicro);
  const { status, statusExplanation } = describeStatus(account, balanceMicro);
  return {
    balance: microToCredits(balanceMicro),
    lowBalance: balanceMicro < thresholdMicro,
    lowBalanceThreshold: microToCredits(thresholdMicro),
    lastUpdated: now.toISOString(),
    autoDebitStatus: account.autoDebit,
    status,
    statusExplanation,
  };
}

function describeStatus(account: AccountEntity, balanceMicro: bigint): { status: string; statusExplanation: string } {
  if (account.status === 'suspended') {
    return { status: 'suspended', statusExplanation: 'The account is suspended by an administrator; requests are refused.' };
  }
  if (balanceMicro <= 0n) {
    return {
      status: 'exhausted',
      statusExplanation: 'No credits left: paid endpoints answer 403 until the balance is topped up or the payment method is updated.',
    };
  }
  const plan = account.plan === 'paid' ? 'paid plan' : 'free plan (hourly request limit applies)';
  return { status: 'active', statusExplanation: `The ${plan} is active and requests are served while credits remain.` };
}
