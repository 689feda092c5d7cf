import { Controller, Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BalanceDto } from '@igw/contracts';
import { microToCredits } from '@igw/domain';
import { RequireApiKey } from '@igw/platform';
import type { Request } from 'express';
import { AccountsService } from '../accounts/accounts.service';
import type { AccountEntity } from '../accounts/account.entity';

@ApiTags('billing')
@Controller('v1/billing')
export class BalanceController {
  constructor(private readonly accounts: AccountsService) {}

  /** The credits behind the calling API key (works at zero balance, so clients can see why they get 403). */
  @Get('balance')
  @ApiOperation({ summary: "The calling key's account balance, in credits" })
  @RequireApiKey({ credits: false })
  @ApiOkResponse({ type: BalanceDto })
  async balance(@Req() request: Request): Promise<BalanceDto> {
    const account = await this.accounts.get(request.context.auth!.accountId);
    return toBalance(account, new Date());
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
