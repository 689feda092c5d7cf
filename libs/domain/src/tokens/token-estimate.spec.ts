import { countTokens, estimatePromptTokens, textOf } from './token-estimate';

describe('token estimates', () => {
  it('counts tokens with a real BPE tokenizer', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello')).toBe(1);
    // A long word splits into several tokens, unlike a word count.
    expect(countTokens('antidisestablishmentarianism')).toBeGreaterThan(1);
    expect(countTokens('hello world, hello world')).toBe(2 * countTokens('hello world') + countTokens(','));
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
