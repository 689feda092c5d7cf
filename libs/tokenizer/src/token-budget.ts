import { nextCut } from './o200k-count';
import { countTokens } from './token-estimate';

/**
 * The longest token of o200k_base (and of cl100k_base), in UTF-8 bytes: a run of 128 spaces.
 * token-budget.spec.ts checks it against both vocabularies.
 */
export const LONGEST_TOKEN_BYTES = 128;

/**
 * Bounds on {@link countTokens} of a text of `bytes` UTF-8 bytes that hold for every text: each
 * token is at least one byte and at most {@link LONGEST_TOKEN_BYTES} (counting a long run in
 * slices only adds tokens, each still within those sizes).
 */
export function tokenBounds(bytes: number): { fewest: number; most: number } {
  return { fewest: Math.ceil(bytes / LONGEST_TOKEN_BYTES), most: bytes };
}

/** Whether texts fit a number of tokens, and how many they hold. */
export interface BudgetVerdict {
  fits: boolean;
  /**
   * The tokens of the texts when `exact`; otherwise a bound that decided: the most they can
   * hold when they fit, the fewest when they do not.
   */
  tokens: number;
  exact: boolean;
}

/** One question for {@link countWithinBudget}: do these texts hold at most `budget` tokens? */
export interface BudgetCheck {
  texts: readonly string[];
  budget: number;
}

/** Text counted between two looks at the bounds: about half a millisecond of tokenizer time. */
const COUNTED_BETWEEN_LOOKS = 16_384;

/**
 * Decides whether the texts count to at most `budget` tokens, counting no more than needed: it
 * stops as soon as the tokens counted so far plus a bound on the rest decide (the rest holds at
 * most its bytes and at least its bytes / {@link LONGEST_TOKEN_BYTES}). A long text is counted
 * in pieces cut where o200k's pre-tokenizer starts a new piece anyway, so the pieces sum to
 * exactly the whole text's count.
 */
export function countWithinBudget({ texts, budget }: BudgetCheck): BudgetVerdict {
  // Each text's size is taken once: most texts of a long conversation are counted whole.
  const sizes = texts.map((text) => Buffer.byteLength(text));
  let rest = 0;
  for (const size of sizes) rest += size;
  let counted = 0;
  for (let index = 0; index < texts.length; index++) {
    const text = texts[index];
    for (let start = 0; start < text.length; ) {
      const verdict = verdictFrom(counted, rest, budget);
      if (verdict) return verdict;
      const end = nextCut(text, start + COUNTED_BETWEEN_LOOKS);
      const whole = start === 0 && end === text.length;
      const piece = whole ? text : text.slice(start, end);
      counted += countTokens(piece);
      rest -= whole ? sizes[index] : Buffer.byteLength(piece);
      start = end;
    }
  }
  return verdictFrom(counted, rest, budget)!;
}

/** The verdict once `counted` tokens are counted and `rest` bytes are not, if the bounds on the rest decide it. */
function verdictFrom(counted: number, rest: number, budget: number): BudgetVerdict | undefined {
  const bounds = tokenBounds(rest);
  if (counted + bounds.most <= budget) return { fits: true, tokens: counted + bounds.most, exact: bounds.most === 0 };
  if (counted + bounds.fewest > budget) return { fits: false, tokens: counted + bounds.fewest, exact: rest === 0 };
  return undefined;
}
