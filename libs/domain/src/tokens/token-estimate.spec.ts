import { countTokens, estimatePromptTokens, textOf } from './token-estimate';

describe('token estimates', () => {
  it('counts tokens with a real BPE tokenizer', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello')).toBe(1);
    // A long word splits into several tokens, unlike a word count.
    expect(countTokens('antidisestablishmentarianism')).toBeGreaterThan(1);
    expect(countTokens('hello world, hello world')).toBe(2 * countTokens('hello world') + countTokens(','));
  });

  it('counts the names of special tokens as the plain text a client sent', () => {
    // A client may write '<|endoftext|>' in a message; it must not make the count throw.
    expect(countTokens('x<|endoftext|>y')).toBe(9);
  });

  it('counts ordinary text exactly and a run longer than the sliced length slice by slice', () => {
    // The o200k_base counts of these texts, as js-tiktoken (the reference port) gives them.
    expect(countTokens('The quick brown fox jumps over the lazy dog. '.repeat(50))).toBe(501);
    expect(countTokens(`hello ${'a'.repeat(256)} world`)).toBe(36);
    const word = 'a'.repeat(256);
    expect(countTokens(word)).toBe(32);
    expect(countTokens(`hello ${word.repeat(4)} world`)).toBe(countTokens('hello ') + 4 * 32 + countTokens(' world'));
    expect(countTokens(' '.repeat(1024))).toBe(4 * countTokens(' '.repeat(256)));
  });

  it('counts one enormous word, of letters or of punctuation, as fast as ordinary text of its size', () => {
    // Quadratic BPE took minutes on a 24,000-letter word; sliced, a million letters take well under
    // the cost of 4,000 slices. A work count, not a timing: the slices each hold at most 256 letters.
    const letters = Array.from({ length: 1_000_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
    const tokens = countTokens(letters);
    expect(tokens).toBeGreaterThan(1_000_000 / 256);
    expect(tokens).toBeLessThanOrEqual(1_000_000);
    expect(countTokens('!'.repeat(100_000))).toBeGreaterThan(0);
  });

  it('adds the per-message overhead to the message texts', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: ' there' }] },
    ];
    const expected = 3 + (3 + countTokens('system') + countTokens('Be brief.')) + (3 + countTokens('user') + countTokens('Hi there'));
    expect(estimatePromptTokens(messages)).toBe(expected);
  });

  it('reads text parts and ignores other content', () => {
    expect(textOf([{ type: 'image_url', image_url: {} }, { type: 'text', text: 'x' }])).toBe('x');
    expect(textOf(null)).toBe('');
  });
});
