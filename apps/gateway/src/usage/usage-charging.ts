import { Inject, Injectable } from '@nestjs/common';
import { microCreditsToUsd, microToCredits, priceUsage } from '@igw/domain';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import type { PaidCall } from '../paid-requests/admitted-request';
import { UsageRecorder } from './usage-recorder.service';

/** What a response's `meta.usage` says; the same numbers reach the ledger. */
export interface ChargedUsage {
  credits_used: number;
  usd_spent: number;
}

/** A settlement as charged: the client's `meta.usage`, and the exact credits for the request's hold. */
export interface Charge {
  usage: ChargedUsage;
  creditsMicro: bigint;
}

/**
 * Charges what a request used: prices its units at the model's prices of the request's start
 * and records the usage event the ledger applies (UsageRecorder journals and sends it).
 */
@Injectable()
export class UsageCharging {
  private readonly creditsPerUsd: number;

  constructor(
    private readonly usage: UsageRecorder,
    @Inject(SERVICE_SETTINGS) settings: ServiceSettings,
  ) {
    this.creditsPerUsd = settings.env.CREDITS_PER_USD;
  }

  charge(call: PaidCall, units: Record<string, number>): Charge {
    const { model } = call;
    const priced = priceUsage(model.pricing, units, this.creditsPerUsd);
    this.usage.record({
      requestId: call.requestId,
      accountId: call.auth.accountId,
      keyId: call.auth.keyId,
      model: model.id,
      endpoint: call.endpoint,
      units,
      creditsMicro: priced.creditsMicro.toString(),
      usd: priced.usd,
      catalogueRevision: call.catalogueRevision,
      prices: model.pricing?.units ?? [],
      occurredAt: new Date().toISOString(),
      // Left out of the JSON when the client sent none.
      clientRequestId: call.context?.clientRequestId,
      // Left out as well when no upstream took the call.
      deployment: call.deployment,
      cache: call.cache?.status,
      cacheSavedUsd: call.cache?.status === 'hit' ? microCreditsToUsd(priceUsage(call.cache.fullPricing, units, this.creditsPerUsd).creditsMicro - priced.creditsMicro, this.creditsPerUsd) : undefined,
    });
    return { usage: { credits_used: microToCredits(priced.creditsMicro), usd_spent: Number(priced.usd) }, creditsMicro: priced.creditsMicro };
  }
}
