import fc from 'fast-check';
import { countTokens, estimateChatPromptTokens, hasLongRun, estimatePromptTokens, NON_TEXT_PART_TOKENS, StreamedTokenCounter, textOf } from './token-estimate';

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

  it('finds the runs it slices as the regular expression \\S{257,}|\\s{257,} does', () => {
    const whitespace = ' \t\n\v\f\r\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';
    const run = fc.tuple(fc.constantFrom(...whitespace, 'a', 'é', '日', '\u200b', '\u0085'), fc.integer({ min: 1, max: 300 })).map(([char, length]) => char.repeat(length));
    fc.assert(
      fc.property(fc.array(run, { maxLength: 8 }), (runs) => {
        const text = runs.join('');
        expect(hasLongRun(text)).toBe(/\S{257,}|\s{257,}/.test(text));
      }),
      { numRuns: 500 },
    );
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

describe('chat prompt estimates and streamed counts', () => {
  it('counts tool schemas, tool call arguments, a response schema and an allowance per image', () => {
    const messages = [{ role: 'user', content: 'weather?' }];
    const plain = estimateChatPromptTokens({ messages });
    expect(plain).toBe(estimatePromptTokens(messages));
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    expect(estimateChatPromptTokens({ messages, tools })).toBe(plain + countTokens(JSON.stringify(tools)));
    const withImage = [{ role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }];
    expect(estimateChatPromptTokens({ messages: withImage })).toBe(estimatePromptTokens(withImage) + NON_TEXT_PART_TOKENS);
    // A document is not text the count can see either (a PDF page costs its provider image tokens).
    const withFiles = [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } }, { type: 'file', file: { file_data: 'data:text/plain;base64,aGk=' } }] }];
    expect(estimateChatPromptTokens({ messages: withFiles })).toBe(estimatePromptTokens(withFiles) + 2 * NON_TEXT_PART_TOKENS);
    const call = [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];
    expect(estimateChatPromptTokens({ messages: [{ role: 'assistant', content: null, tool_calls: call }] })).toBe(
      estimatePromptTokens([{ role: 'assistant', content: null }]) + countTokens(JSON.stringify(call)),
    );
  });

  it('counts a streamed text like the whole text, keeping a bounded amount of it', () => {
    const text = 'The quick brown fox jumps over the lazy dog.\n'.repeat(2_000);
    const counter = new StreamedTokenCounter();
    for (let at = 0; at < text.length; at += 7) counter.add(text.slice(at, at + 7));
    expect(counter.total()).toBe(countTokens(text));
    expect((counter as unknown as { pending: string }).pending.length).toBeLessThan(5_000);
  });
});
