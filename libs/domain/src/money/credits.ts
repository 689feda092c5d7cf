import { divideRounded, formatScaled, parseDecimal, pow10, toScaledUnits } from './decimal';

/** Credits are kept as integer micro-credits everywhere below the API surface. */
export const MICRO_PER_CREDIT = 1_000_000n;
export const CREDIT_SCALE = 6;
/** USD decimals: one micro-credit at the default ratio is 5e-13 USD, so 15 places keep it exact. */
export const USD_SCALE = 15;

export const DEFAULT_CREDITS_PER_USD = 2_000_000;

/** Parses a credits amount as the API receives it (number or decimal string). */
export function creditsToMicro(credits: number | string): bigint {
  return toScaledUnits(parseDecimal(credits), CREDIT_SCALE);
}

/** For JSON responses: micro-credits as a number of credits (exact for any realistic balance). */
export function microToCredits(micro: bigint): number {
  return Number(formatScaled(micro, CREDIT_SCALE));
}

export function formatMicroCredits(micro: bigint): string {
  return formatScaled(micro, CREDIT_SCALE);
}

/** USD, as an exact decimal string at USD_SCALE, for an amount of micro-credits. */
export function microCreditsToUsd(micro: bigint, creditsPerUsd: number): string {
  const ratio = parseDecimal(creditsPerUsd);
  // usd = micro / 1e6 / ratio  =  micro * 10^ratio.scale / (ratio.units * 1e6)
  const numerator = micro * pow10(ratio.scale + USD_SCALE);
  const denominator = ratio.units * MICRO_PER_CREDIT;
  const units = divideRounded(numerator, denominator);
  return formatScaled(units, USD_SCALE);
}
