import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { MessagingService } from '@igw/messaging';

export interface BalanceChange {
  accountId: string;
  balanceMicro: bigint;
  balanceVersion: number;
  /** The account's usage charges applied so far, as of this version. */
  usageSpentMicro: bigint;
}

/** Usage moves a busy account's balance many times a second; gateways need only the latest. */
const COALESCE_MS = 100;

/**
 * Tells every gateway about balance changes. Changes caused by usage are coalesced per
 * account (the newest version at most every 100 ms, so a replica does not process one
 * broadcast per request); admin changes go out at once.
 */
@Injectable()
export class BalanceAnnouncer implements BeforeApplicationShutdown {
  private readonly logger = new Logger(BalanceAnnouncer.name);
  private readonly pending = new Map<string, BalanceChange>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly messaging: MessagingService) {}

  async now(change: BalanceChange): Promise<void> {
    this.pending.delete(change.accountId);
    await this.publish(change);
  }

  soon(change: BalanceChange): void {
    const known = this.pending.get(change.accountId);
    if (!known || change.balanceVersion > known.balanceVersion) this.pending.set(change.accountId, change);
    this.timer ??= setTimeout(() => void this.flush(), COALESCE_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  private async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const changes = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(
      changes.map((change) => this.publish(change).catch((error: unknown) => this.logger.warn(`balance of ${change.accountId} not announced: ${String(error)}`))),
    );
  }

  private publish(change: BalanceChange): Promise<void> {
    return this.messaging.publish('billing.balance.changed', {
      accountId: change.accountId,
      balanceMicro: change.balanceMicro.toString(),
      balanceVersion: change.balanceVersion,
      usageSpentMicro: change.usageSpentMicro.toString(),
    });
  }
}
