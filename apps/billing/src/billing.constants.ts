/** Credits under which an account is reported as low-balance when none is given at creation. */
export const DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS = 100_000;
/**
 * The plan of an account created without one: `paid` when it opens with credits (someone paid
 * for them, and the free plan's hourly request limit would cut them off), `free` when it opens empty.
 */
export function defaultPlan(openingMicroCredits: bigint): 'free' | 'paid' {
  return openingMicroCredits > 0n ? 'paid' : 'free';
}
export const DEFAULT_PLAN_DESCRIPTION = '`paid` when the account opens with credits (credits or usd above 0), `free` when it opens empty';

/**
 * The largest credit amount one admin request may set or move (a top-up, a correction, an
 * opening balance, a threshold): $500,000 at the default 2,000,000 credits per USD, and far
 * inside the bigint micro-credit columns (about 9.2e12 credits).
 */
export const MAX_ADMIN_CREDITS = 1_000_000_000_000;
/** Credits are exact to the micro-credit. */
export const CREDIT_DECIMALS = 6;
