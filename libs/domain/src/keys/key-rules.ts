import { MICRO_PER_CREDIT, CREDIT_SCALE, USD_SCALE } from '../money/credits';
import { formatScaled, parseDecimal, pow10, toScaledUnits } from '../money/decimal';

/** How long a key's budget runs before it starts again at zero (UTC boundaries); `lifetime` never does. */
export type BudgetPeriod = 'day' | 'month' | 'lifetime';
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'month', 'lifetime'];
/** What a key's budget counts: the ledger's USD or its credits. */
export type BudgetUnit = 'usd' | 'credits';
export const BUDGET_UNITS: readonly BudgetUnit[] = ['usd', 'credits'];

/** The start of the period `at` falls in (UTC); a lifetime starts at the epoch. */
export function periodStartOf(period: BudgetPeriod, at: Date): Date {
  if (period === 'lifetime') return new Date(0);
  if (period === 'day') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** When the period that started at `start` ends and the next begins; null for a lifetime, which never resets. */
export function periodEndOf(period: BudgetPeriod, start: Date): Date | null {
  if (period === 'lifetime') return null;
  if (period === 'day') return new Date(start.getTime() + 86_400_000);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/**
 * The micro-credits a budget of `limit` (an exact decimal) in `unit` allows. USD converts at
 * `creditsPerUsd`, rounded down: a budget never lets a key spend a fraction of a micro-credit past it.
 */
export function budgetLimitMicro(limit: string, unit: BudgetUnit, creditsPerUsd: number): bigint {
  const amount = parseDecimal(limit);
  if (unit === 'credits') return floorDiv(amount.units * MICRO_PER_CREDIT, pow10(amount.scale));
  const ratio = parseDecimal(creditsPerUsd);
  return floorDiv(amount.units * ratio.units * MICRO_PER_CREDIT, pow10(amount.scale + ratio.scale));
}

/** A key's spend as the API shows it: in the budget's unit, as an exact decimal string. */
export function formatSpend(spentMicro: bigint, spentUsd: string, unit: BudgetUnit): string {
  if (unit === 'credits') return formatScaled(spentMicro, CREDIT_SCALE);
  return formatScaled(toScaledUnits(parseDecimal(spentUsd), USD_SCALE), USD_SCALE);
}

/** The largest budget accepted, in micro-credits: its sums stay far inside PostgreSQL's bigint. */
export const MAX_BUDGET_MICRO = 2n ** 62n;

/** What an allowlist entry may hold: model ids, aliases, and `*` for any run of characters. */
export const MODEL_PATTERN = /^[A-Za-z0-9._:@/*+-]{1,200}$/;

/**
 * Whether a key whose allowlist is `patterns` may call `model` (as the catalogue resolved it):
 * an entry names its id or one of its aliases, or is a pattern with `*` (any run of characters,
 * `/` included) matched against the id, case-insensitively as the catalogue resolves names.
 */
export function modelAllowed(patterns: readonly string[], model: { id: string; aliases: readonly string[] }): boolean {
  const id = model.id.toLowerCase();
  for (const pattern of patterns) {
    const entry = pattern.toLowerCase();
    if (entry.includes('*')) {
      if (globMatches(entry, id)) return true;
    } else if (entry === id || model.aliases.some((alias) => alias.toLowerCase() === entry)) {
      return true;
    }
  }
  return false;
}

/** `*` matches any run of characters; everything else itself. Linear in the text (no backtracking blow-up). */
function globMatches(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!text.startsWith(first) || text.length < first.length + last.length || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let index = 1; index < parts.length - 1; index++) {
    const found = text.indexOf(parts[index], at);
    if (found < 0 || found + parts[index].length > end) return false;
    at = found + parts[index].length;
  }
  return true;
}

function floorDiv(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  return numerator < 0n && quotient * denominator !== numerator ? quotient - 1n : quotient;
}
