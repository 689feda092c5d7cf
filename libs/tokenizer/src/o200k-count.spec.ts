import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { countTokens as countWithGptTokenizer } from 'gpt-tokenizer/encoding/o200k_base';
import { countO200kTokens } from './o200k-count';

const reference = (text: string) => countWithGptTokenizer(text, { disallowedSpecial: new Set<string>() });

/** Texts of up to `maxLength` pieces joined, `numRuns` of them: each counted as gpt-tokenizer counts it. */
function countsOfJoinedPieces(piece: fc.Arbitrary<string>, maxLength: number, numRuns: number): void {
  fc.assert(
    fc.property(fc.array(piece, { maxLength }), (pieces) => {
      const text = pieces.join('');
      expect(countO200kTokens(text)).toBe(reference(text));
    }),
    { numRuns },
  );
}

/** Every ASCII character class the scanner tells apart, and the characters its branches look for. */
const ASCII_EDGES = ` \t\n\r\v\f\u0000\u0001\u007f!"#$%&'()*+,-./0123456789:;<=>?@[\\]^_\`{|}~aAzZsStTmMdDlLvVeErR`;

describe('counting o200k tokens', () => {
  it('counts every short ASCII text as gpt-tokenizer does', () => {
    countsOfJoinedPieces(fc.constantFrom(...ASCII_EDGES), 40, 20_000);
  });

  it('counts contractions, capitals, numbers and whitespace runs as gpt-tokenizer does', () => {
    const words = fc.constantFrom("it's", "IT'S", "we'LL", "they're", "I'm", "'d", "'ve", "don't", 'CamelCase', 'HTTPServer', 'ABC', 'a1b2', '1234567', '  ', '\n\n', ' \n ', '\r\n', '\t ', '//', ' /\n', '-->', '(x)', ' ');
    countsOfJoinedPieces(words, 30, 5_000);
  });

  it('counts text mixing ASCII with every other kind of character as gpt-tokenizer does', () => {
    const piece = fc.oneof(
      fc.constantFrom('the ', 'The', ' ', '\n', "'s", '123', 'é', 'naïve ', '日本語', '👍🏽', '—', '’s', '“', '”', '…', '•', '€', '½', '٣', '\u0301', '\u00a0', '\u3000', '\u2028', '\u0085', 'café ', '𝐀', '<|endoftext|>'),
      fc.string({ maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 6 }),
    );
    countsOfJoinedPieces(piece, 400, 500);
  });

  it('counts every punctuation mark and symbol of the Basic Multilingual Plane as gpt-tokenizer does', () => {
    // The characters the scanner reads itself (as o200k's [^\s\p{L}\p{N}]); the rest go to gpt-tokenizer.
    const symbols: string[] = [];
    for (let code = 0x80; code < 0x10000; code++) {
      const character = String.fromCharCode(code);
      if (!(code >= 0xd800 && code <= 0xdfff) && !/[\p{L}\p{N}\p{M}\s]/u.test(character)) symbols.push(character);
    }
    expect(symbols.length).toBeGreaterThan(5_000);
    for (let block = 0; block < symbols.length; block += 64) {
      const text = symbols
        .slice(block, block + 64)
        .map((symbol) => `a${symbol}b ${symbol}${symbol} X${symbol}'s ${symbol}\n`)
        .join('');
      expect({ block, tokens: countO200kTokens(text) }).toEqual({ block, tokens: reference(text) });
    }
  });

  it("counts real text, this repository's source files and documents, as gpt-tokenizer does", () => {
    const root = path.resolve(__dirname, '../../..');
    const files = [
      'README.md',
      ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
      ...readdirSync(__dirname).map((name) => path.relative(root, path.join(__dirname, name))),
      'apps/catalogue/data/catalogue.yaml',
    ];
    for (const file of files) {
      const text = readFileSync(path.join(root, file), 'utf8');
      expect({ file, tokens: countO200kTokens(text) }).toEqual({ file, tokens: reference(text) });
    }
  });

  it('tells apart pieces that share their last eight code units and their length', () => {
    // Each pair is one key in the table of counts (a code unit above 255 spills into its
    // neighbour's byte; a long piece keeps only its end): the second must be counted, not found.
    const pairs = [
      ['!\u2019', '!\u0019'],
      ['!\u2019', '\u0001\u2019'],
      [' unbelievable', ' xnbelievable'],
      [' ABCDEFGHIJ', ' XBCDEFGHIJ'],
      ['::::::::::::', ';:::::::::::'],
    ];
    for (const [first, second] of pairs) {
      expect(reference(first)).not.toBe(reference(second));
      for (const text of [`${first}a${second}`, `${second}a${first}`]) {
        expect({ text, tokens: countO200kTokens(text) }).toEqual({ text, tokens: reference(text) });
      }
    }
  });

  it('keeps counting exactly when more distinct pieces pass than its table holds', () => {
    const words = Array.from({ length: 80_000 }, (_, index) => `w${index.toString(36)}q`);
    const text = words.join(' ');
    expect(countO200kTokens(text)).toBe(reference(text));
    expect(countO200kTokens(text)).toBe(reference(text));
  });
});
