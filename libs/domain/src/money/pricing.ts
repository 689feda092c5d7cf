import { divideRounded, parseDecimal, pow10 } from './decimal';
import { CREDIT_SCALE, microCreditsToUsd } from './credits';

/**
 * The part of a catalogue price list that pricing reads: `price` USD per `per` units of `unit`,
 * or, for an entry with `promptTokensAbove`, per unit of a request whose prompt is longer.
 */
export interface PriceList {
  units: ReadonlyArray<{ unit: string; price: number | string; per: number; promptTokensAbove?: number }>;
}

/**
 * The size of a request's prompt, which chooses among prompt-size prices: every unit named
 * `*input_tokens` (plain, cache reads, cache writes of either lifetime) is a prompt token.
 */
export function promptTokensOf(units: Readonly<Record<string, number>>): number {
  let tokens = 0;
  for (const unit in units) if (unit.endsWith('input_tokens')) tokens += units[unit];
  return tokens;
}

export interface PricedUsage {
  creditsMicro: bigint;
  usd: string;
}

/** What an unpriced request is priced with. */
const NO_PRICES: Pick<PreparedList, 'prices' | 'banded'> = { prices: [], banded: false };

/** Intermediate precision below the micro-credit, so per-unit rounding never accumulates. */
const GUARD_SCALE = 18;

/** One price of a list, ready to multiply: credits (scaled by the guard) per unit = count * factor / denominator. */
interface PreparedPrice {
  unit: string;
  factor: bigint;
  denominator: bigint;
  promptTokensAbove?: number;
}

/** A price list made ready: its prices, and whether any of them is for longer prompts only. */
interface PreparedList {
  creditsPerUsd: number;
  prices: PreparedPrice[];
  banded: boolean;
}

/** Price lists are catalogue entries, priced again on every request: each is prepared once per credit ratio. */
const preparedLists = new WeakMap<PriceList, PreparedList>();

function preparedList(pricing: PriceList, creditsPerUsd: number): PreparedList {
  const cached = preparedLists.get(pricing);
  if (cached && cached.creditsPerUsd === creditsPerUsd) return cached;
  const ratio = parseDecimal(creditsPerUsd);
  const prices = pricing.units.map((entry) => {
    const price = parseDecimal(entry.price);
    return {
      unit: entry.unit,
      factor: price.units * ratio.units * pow10(CREDIT_SCALE + GUARD_SCALE),
      denominator: pow10(price.scale + ratio.scale) * BigInt(entry.per),
      promptTokensAbove: entry.promptTokensAbove,
    };
  });
  const prepared = { creditsPerUsd, prices, banded: prices.some((price) => price.promptTokensAbove !== undefined) };
  preparedLists.set(pricing, prepared);
  return prepared;
}

/**
 * The entry that prices `unit` for a request whose prompt has `promptTokens` tokens: of the
 * unit's entries whose `promptTokensAbove` the prompt passes (an entry without one always
 * does), the one with the highest; undefined when the list does not price the unit.
 */
export function priceFor<P extends { unit: string; promptTokensAbove?: number }>(prices: readonly P[], unit: string, promptTokens: number): P | undefined {
  let applied: P | undefined;
  for (const price of prices) {
    if (price.unit !== unit || (price.promptTokensAbove ?? -1) >= promptTokens) continue;
    if (!applied || (price.promptTokensAbove ?? -1) > (applied.promptTokensAbove ?? -1)) applied = price;
  }
  return applied;
}

/**
 * Prices metered units with a catalogue price list. Every price is read with its `per`
 * (USD for `per` units); units the price list does not name are free (e.g. the output
 * tokens of an embedding model). A unit listed with prompt-size thresholds is charged at the
 * entry `priceFor` picks for the prompt's size (`promptTokensOf`), for all of its count.
 * Rounds once, to the micro-credit, half away from zero.
 */
export function priceUsage(pricing: PriceList | undefined, units: Record<string, number>, creditsPerUsd: number): PricedUsage {
  let guarded = 0n;
  const { prices, banded } = pricing ? preparedList(pricing, creditsPerUsd) : NO_PRICES;
  const prompt = banded ? promptTokensOf(units) : 0;
  for (const price of prices) {
    if (banded && priceFor(prices, price.unit, prompt) !== price) continue;
    const count = units[price.unit];
    if (!count) continue;
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`Unit count for ${price.unit} must be a non-negative integer`);
    guarded += divideRounded(BigInt(count) * price.factor, price.denominator);
  }
  const creditsMicro = divideRounded(guarded, pow10(GUARD_SCALE));
  return { creditsMicro, usd: microCreditsToUsd(creditsMicro, creditsPerUsd) };
}
