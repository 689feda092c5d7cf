/**
 * The arithmetic of the chat-logprobs fallback. These are the model's own next-token
 * probabilities over the answer labels, renormalised; they are not trained calibration.
 *
 * - One call asks for one label token; the top log probabilities of that token give each
 *   label's mass, exp(logprob), summed over the spellings that mean the label (` A`, `a`, `A`).
 *   The masses are renormalised over the labels: pᵢ = massᵢ / Σ mass. Labels missing from the
 *   top list get 0; a call where no label appears at all has no answer.
 * - noul = p(yes) / (p(yes) + p(no)); choice = the most probable label, confidence = its p;
 *   score = Σ i·pᵢ with levels numbered from 0, lowest first.
 * - More options than one call can label (20, the most top log probabilities an upstream
 *   returns) go in rounds: each group of up to 20 gives p(o | group); a final call among the
 *   groups' winners gives p_final(winner). Assuming Luce's choice axiom (the ratio of two
 *   options' probabilities does not depend on what else is offered), a group's mass is
 *   p_final(winner) / p(winner | group), and p(o) = mass(group of o) · p(o | group),
 *   normalised.
 */

/** Single-token labels: letters for options, digits for score levels. */
export const CHOICE_LABELS = 'ABCDEFGHIJKLMNOPQRST'.split('');
export const SCORE_LABELS = '0123456789'.split('');
export const NOUL_LABELS = ['yes', 'no'];
/** The most top log probabilities an OpenAI-format upstream returns, hence the most labels one call can weigh. */
export const MAX_LABELS_PER_CALL = CHOICE_LABELS.length;

export interface TopLogprob {
  token: string;
  logprob: number;
}

const spelling = (token: string) => token.trim().toLowerCase();

/** Each label's probability, renormalised over the labels; undefined when none of them is among the top tokens. */
export function labelDistribution(top: readonly TopLogprob[], labels: readonly string[]): number[] | undefined {
  const index = new Map(labels.map((label, i) => [spelling(label), i]));
  const mass = labels.map(() => 0);
  for (const { token, logprob } of top) {
    const i = index.get(spelling(token));
    if (i !== undefined && Number.isFinite(logprob)) mass[i] += Math.exp(logprob);
  }
  const total = mass.reduce((sum, value) => sum + value, 0);
  return total > 0 ? mass.map((value) => value / total) : undefined;
}

/** Option indices in groups of at most `size`, in order. */
export function rounds(count: number, size = MAX_LABELS_PER_CALL): number[][] {
  const groups: number[][] = [];
  for (let start = 0; start < count; start += size) groups.push(Array.from({ length: Math.min(size, count - start) }, (_, i) => start + i));
  return groups;
}

export function argmax(values: readonly number[]): number {
  let best = 0;
  values.forEach((value, i) => {
    if (value > values[best]) best = i;
  });
  return best;
}

/**
 * The distribution over all options from each group's distribution (`within[g]`, over the
 * group's options) and the final round's (`final[g]`, over the groups' winners).
 */
export function combineRounds(within: readonly (readonly number[])[], final: readonly number[]): number[] {
  const scaled = within.flatMap((group, g) => {
    const winner = group[argmax(group)];
    const mass = final[g] / winner;
    return group.map((probability) => mass * probability);
  });
  const total = scaled.reduce((sum, value) => sum + value, 0);
  return scaled.map((value) => value / total);
}
