import { UpstreamProtocolError } from '../upstream.errors';
import { CompletionsNativeEvents, completionsUsageOf } from './openai-completions.native';

const chunk = (choices: Array<{ index: number; text: string }>, usage?: unknown) => ({ data: JSON.stringify({ id: 'cmpl-1', object: 'text_completion', model: 'm', choices, ...(usage !== undefined ? { usage } : {}) }) });

describe('legacy completions, read natively', () => {
  it('passes each chunk on as it came, its text a piece to count, its usage where it comes, closed by [DONE]', () => {
    const reader = new CompletionsNativeEvents('vllm');
    const first = reader.read(chunk([{ index: 0, text: ' Hello' }]));
    expect(first.data).toContain('"text_completion"');
    expect(first.chunks.map((piece) => piece.choices[0].delta.content)).toEqual([' Hello']);
    expect(first.usage).toBeUndefined();
    // vLLM sends usage: null on every chunk but the last.
    expect(reader.read(chunk([{ index: 0, text: ' there' }], null)).usage).toBeUndefined();
    expect(reader.read(chunk([], { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 })).usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    expect(() => reader.end()).toThrow(UpstreamProtocolError);
    expect(reader.read({ data: '[DONE]' }).chunks).toEqual([]);
    expect(() => reader.end()).not.toThrow();
  });

  it('leaves an echoed prompt out of what it counts as generated, once per choice', () => {
    const reader = new CompletionsNativeEvents('openai', (choice) => (choice === 0 ? 'def f():' : undefined));
    expect(reader.read(chunk([{ index: 0, text: 'def f():' }])).chunks).toEqual([]);
    expect(reader.read(chunk([{ index: 0, text: 'def f(): return' }])).chunks[0].choices[0].delta.content).toBe('def f(): return');
    expect(reader.read(chunk([{ index: 1, text: 'def f(): x' }])).chunks[0].choices[0].delta.content).toBe('def f(): x');
  });

  it('fails on an error in the stream or a chunk that is not JSON', () => {
    const reader = new CompletionsNativeEvents('openai');
    expect(() => reader.read({ data: JSON.stringify({ error: { message: 'overloaded' } }) })).toThrow('overloaded');
    expect(() => reader.read({ data: 'not json' })).toThrow(UpstreamProtocolError);
  });

  it('reads usage only when both counts are whole, with cached tokens where reported', () => {
    expect(completionsUsageOf({ usage: { prompt_tokens: 3, completion_tokens: 1.5 } })).toBeUndefined();
    expect(completionsUsageOf({ usage: { prompt_tokens: 3, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 2 } } })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 1,
      total_tokens: 4,
      prompt_tokens_details: { cached_tokens: 2 },
    });
  });
});
