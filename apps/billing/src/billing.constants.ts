/** Credits under which an account is reported as low-balance when none is given at creation. */
export const DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS = 100_000;
export const DEFAULT_PLAN = 'free';
