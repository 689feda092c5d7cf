import { expectedLevel } from '@igw/contracts';
import { LogprobFallback, MAX_PARALLEL_CALLS } from './logprob-fallback';
import { combineRounds, labelDistribution, rounds } from './logprob-math';

const ln = Math.log;

describe('chat-logprobs fallback arithmetic', () => {
  it.each([
    // [top log probabilities, labels, expected probabilities]
    ['noul, yes twice as likely as no', [{ token: 'yes', logprob: ln(0.6) }, { token: 'no', logprob: ln(0.3) }, { token: 'maybe', logprob: ln(0.1) }], ['yes', 'no'], [2 / 3, 1 / 3]],
    ['spellings of one label add up', [{ token: ' Yes', logprob: ln(0.2) }, { token: 'yes', logprob: ln(0.4) }, { token: 'No', logprob: ln(0.2) }], ['yes', 'no'], [0.75, 0.25]],
    ['a label absent from the top tokens gets 0', [{ token: 'A', logprob: ln(0.5) }, { token: 'C', logprob: ln(0.25) }, { token: 'Z', logprob: ln(0.25) }], ['A', 'B', 'C'], [2 / 3, 0, 1 / 3]],
    ['score levels 0-3', [{ token: '0', logprob: ln(0.1) }, { token: '1', logprob: ln(0.2) }, { token: '2', logprob: ln(0.3) }, { token: '3', logprob: ln(0.4) }], ['0', '1', '2', '3'], [0.1, 0.2, 0.3, 0.4]],
  ])('%s', (_, top, labels, expected) => {
    const probabilities = labelDistribution(top, labels)!;
    expected.forEach((p, i) => expect(probabilities[i]).toBeCloseTo(p, 12));
    expect(probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('has no answer when no label is among the top tokens', () => {
    expect(labelDistribution([{ token: 'Hello', logprob: -0.01 }], ['yes', 'no'])).toBeUndefined();
  });

  it('score is Σ i·pᵢ, levels from 0', () => {
    expect(expectedLevel([0.1, 0.2, 0.3, 0.4])).toBeCloseTo(0 * 0.1 + 1 * 0.2 + 2 * 0.3 + 3 * 0.4, 12);
    expect(expectedLevel([0, 0, 1])).toBe(2);
  });

  it('splits more than 20 options into rounds of 20', () => {
    expect(rounds(20)).toEqual([Array.from({ length: 20 }, (_, i) => i)]);
    expect(rounds(45).map((group) => [group[0], group.at(-1)])).toEqual([[0, 19], [20, 39], [40, 44]]);
    expect(rounds(255)).toHaveLength(13);
  });

  it('combines rounds by the winners: p(o) = p_final(winner) / p(winner | group) · p(o | group)', () => {
    // Group 1: [0.5, 0.3, 0.2] (winner 0.5); group 2: [0.8, 0.2] (winner 0.8); final: [0.25, 0.75].
    const combined = combineRounds([[0.5, 0.3, 0.2], [0.8, 0.2]], [0.25, 0.75]);
    const raw = [0.5, 0.3, 0.2].map((p) => (0.25 / 0.5) * p).concat([0.8, 0.2].map((p) => (0.75 / 0.8) * p));
    const total = raw.reduce((a, b) => a + b, 0);
    raw.forEach((p, i) => expect(combined[i]).toBeCloseTo(p / total, 12));
    expect(combined.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    // A model consistent with Luce's axiom gets back exactly its distribution over all options.
    const truth = [0.3, 0.1, 0.2, 0.25, 0.15];
    const groups = [[0, 1, 2], [3, 4]].map((group) => group.map((i) => truth[i] / group.reduce((s, j) => s + truth[j], 0)));
    const winners = [0, 3].map((i) => truth[i] / (truth[0] + truth[3]));
    combineRounds(groups, winners).forEach((p, i) => expect(p).toBeCloseTo(truth[i], 12));
  });
});

describe('the fallback caller', () => {
  it('keeps at most MAX_PARALLEL_CALLS calls of one decision in flight, and answers every question', async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const release: Array<() => void> = [];
    const fallback = new LogprobFallback(
      {
        chat: async () => {
          calls++;
          inFlight++;
          most = Math.max(most, inFlight);
          await new Promise<void>((resolve) => release.push(resolve));
          inFlight--;
          const completion = { choices: [{ logprobs: { content: [{ token: 'yes', logprob: Math.log(0.75), top_logprobs: [{ token: 'yes', logprob: Math.log(0.75) }, { token: 'no', logprob: Math.log(0.25) }] }] } }], usage: { prompt_tokens: 10, completion_tokens: 1 } };
          return { completion: completion as never, provider: 'openai' };
        },
      },
      [{ type: 'text', text: 'Content:\nx' }],
    );
    const questions = Array.from({ length: 40 }, (_, i) => ({ name: `q${i}`, type: 'noul' as const, instructions: 'ok?' }));
    const answering = fallback.answer(questions);
    while (calls < 40) {
      await new Promise((resolve) => setImmediate(resolve));
      release.splice(0).forEach((resolve) => resolve());
    }
    await new Promise((resolve) => setImmediate(resolve));
    release.splice(0).forEach((resolve) => resolve());
    const answers = await answering;
    expect(most).toBe(MAX_PARALLEL_CALLS);
    expect(answers.map((answer) => answer.type === 'noul' && answer.probability)).toEqual(questions.map(() => 0.75));
    expect(fallback.usage).toEqual({ input_tokens: 400, output_tokens: 40 });
  });
});
