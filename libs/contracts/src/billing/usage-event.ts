import type { PriceUnit } from '../catalogue/catalogue-model';

/**
 * One billable request, as the gateway priced it. The ledger applies it exactly once,
 * keyed by `requestId`. Money travels as strings of integers in micro-credits
 * (1 credit = 1,000,000 micro-credits) so no float ever touches a sum.
 */
export interface UsageEvent {
  requestId: string;
  accountId: string;
  keyId: string;
  model: string;
  endpoint: string;
  /** Metered units by name, e.g. { input_tokens: 12, output_tokens: 30 }. */
  units: Record<string, number>;
  creditsMicro: string;
  /** USD as an exact decimal string. */
  usd: string;
  /** Catalogue revision whose prices were used. */
  catalogueRevision: number;
  /**
   * The price list applied (price USD per `per` units; prices for longer prompts with their
   * `promptTokensAbove`), so the ledger shows what was charged and why.
   */
  prices: PriceUnit[];
  occurredAt: string;
  /** The client's X-Client-Request-Id (printable ASCII, at most 128 characters), when it sent one. */
  clientRequestId?: string;
  /**
   * The deployment that served the request, `<connection>/<upstream>` (e.g. `azure-eastus/gpt-4o-prod`).
   * Absent from events journalled before gateways recorded it.
   */
  deployment?: string;
}
