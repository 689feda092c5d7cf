import fc from 'fast-check';
import cl100k from 'gpt-tokenizer/bpeRanks/cl100k_base';
import o200k from 'gpt-tokenizer/bpeRanks/o200k_base';
import { nextCut } from './o200k-count';
import { countWithinBudget, LONGEST_TOKEN_BYTES, tokenBounds } from './token-budget';
import { countTokens } from './token-estimate';

/** Text with what moves token boundaries: words, numbers, punctuation, runs of spaces and newlines, accents, CJK, emoji, long runs. */
const piece = fc.oneof(
  fc.constantFrom('the', 'The', ' ', '  ', '\n', '\n\n', ' \n', '\t', '.', ',', "'s", "n't", '123', '45678', '(', ')', '//', '{"a":1}', 'é', 'naïve', '日本語', '👍🏽', '-', '—', '\u00a0', '\u3000 ', '\r\n', '\u2028', '<|endoftext|>', 'a'.repeat(300), ' '.repeat(300)),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);
const text = fc.array(piece, { maxLength: 60 }).map((pieces) => pieces.join(''));

describe('token bounds', () => {
  it('use the longest token of o200k_base and cl100k_base', () => {
    const longest = (ranks: ReadonlyArray<string | readonly number[]>) => {
      let bytes = 0;
      ranks.forEach((token) => (bytes = Math.max(bytes, typeof token === 'string' ? Buffer.byteLength(token) : token.length)));
      return bytes;
    };
    expect(longest(o200k)).toBe(LONGEST_TOKEN_BYTES);
    expect(longest(cl100k)).toBe(LONGEST_TOKEN_BYTES);
  });

  it('hold for every text: at least its bytes / the longest token, at most its bytes', () => {
    fc.assert(
      fc.property(text, (sample) => {
        const { fewest, most } = tokenBounds(Buffer.byteLength(sample));
        const tokens = countTokens(sample);
        expect(tokens).toBeGreaterThanOrEqual(fewest);
        expect(tokens).toBeLessThanOrEqual(most);
      }),
      { numRuns: 300 },
    );
    // The extremes: one token per byte, and 128 bytes per token.
    expect(countTokens('\u0001'.repeat(1000))).toBe(tokenBounds(1000).most);
    expect(countTokens(' '.repeat(128 * 8) + 'x')).toBeGreaterThanOrEqual(tokenBounds(128 * 8 + 1).fewest);
  });
});

describe('counting a text in pieces', () => {
  it('cuts only where the pieces count exactly as the whole text', () => {
    fc.assert(
      fc.property(text, fc.nat({ max: 200 }), (sample, step) => {
        let total = 0;
        for (let start = 0; start < sample.length; ) {
          const end = nextCut(sample, start + step + 1);
          expect(end).toBeGreaterThan(start);
          total += countTokens(sample.slice(start, end));
          start = end;
        }
        expect(total).toBe(countTokens(sample));
      }),
      { numRuns: 500 },
    );
  });

  it('finds a cut after a word, never inside a run of whitespace', () => {
    expect(nextCut('one two three', 1)).toBe(3);
    expect(nextCut('one  two', 4)).toBe(8);
    expect(nextCut('one\n two', 1)).toBe(8);
    expect(nextCut('no-spaces-at-all', 0)).toBe(16);
  });
});

describe('countWithinBudget', () => {
  it('decides as the exact count would', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 4 }), fc.nat({ max: 400 }), (texts, budget) => {
        const exact = texts.reduce((sum, sample) => sum + countTokens(sample), 0);
        const verdict = countWithinBudget({ texts, budget });
        expect(verdict.fits).toBe(exact <= budget);
        if (verdict.exact) expect(verdict.tokens).toBe(exact);
        else if (verdict.fits) expect(verdict.tokens).toBeGreaterThanOrEqual(exact);
        else expect(verdict.tokens).toBeLessThanOrEqual(exact);
      }),
      { numRuns: 300 },
    );
  });

  it('counts nothing where the bytes decide, and stops once what is counted decides', () => {
    const words = 'lorem ipsum dolor sit amet '.repeat(20_000);
    expect(countWithinBudget({ texts: [words], budget: Buffer.byteLength(words) })).toEqual({ fits: true, tokens: Buffer.byteLength(words), exact: false });
    expect(countWithinBudget({ texts: ['x'.repeat(129)], budget: 1 })).toEqual({ fits: false, tokens: 2, exact: false });
    // Over budget after the first pieces: the verdict names fewer tokens than the whole text has.
    const early = countWithinBudget({ texts: [words], budget: 10_000 });
    expect(early.fits).toBe(false);
    expect(early.exact).toBe(false);
    expect(early.tokens).toBeGreaterThan(10_000);
    expect(early.tokens).toBeLessThan(countTokens(words));
    // Within budget once the counted part and the rest's bytes fit: decided before the end.
    const late = countWithinBudget({ texts: [words], budget: 500_000 });
    expect(late).toMatchObject({ fits: true, exact: false });
    expect(countWithinBudget({ texts: [words, 'end'], budget: countTokens(words) + 1 })).toEqual({ fits: true, tokens: countTokens(words) + 1, exact: true });
  });
});
