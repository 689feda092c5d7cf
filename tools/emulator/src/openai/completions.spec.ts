import { startEmulator, type RunningEmulator } from '../emulator';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = Record<string, any>;

/** The emulator's legacy completions and moderation endpoints, in OpenAI's wire format. */
describe('emulator: POST /v1/completions and /v1/moderations', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKey: 'sk-test' });
  });
  afterAll(() => emulator.close());

  const post = (path: string, body: unknown) =>
    fetch(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify(body) });

  it('completes each prompt n times, cut at max_tokens words, with usage counting best_of', async () => {
    const answer = (await (await post('/v1/completions', { model: 'instruct', prompt: ['one two', 'three'], max_tokens: 3, n: 2, best_of: 3 })).json()) as Answer;
    expect(answer).toMatchObject({ object: 'text_completion', model: 'instruct' });
    expect(answer.choices.map((choice: Answer) => [choice.index, choice.text, choice.finish_reason])).toEqual([
      [0, ' Hello from the', 'length'],
      [1, ' Hello from the', 'length'],
      [2, ' Hello from the', 'length'],
      [3, ' Hello from the', 'length'],
    ]);
    // 2 + 1 prompt words; 3 words × best_of 3 × 2 prompts generated.
    expect(answer.usage).toEqual({ prompt_tokens: 3, completion_tokens: 18, total_tokens: 21 });
  });

  it('fills in the middle, echoes the prompt and scores its words, stopping at a stop sequence', async () => {
    const answer = (await (await post('/v1/completions', { model: 'm', prompt: 'def f():', suffix: 'return 1', echo: true, logprobs: 1, stop: ' Then' })).json()) as Answer;
    expect(answer.choices[0].text).toBe('def f(): Hello from the emulator. You wrote: def f():');
    expect(answer.choices[0].finish_reason).toBe('stop');
    expect(answer.choices[0].logprobs.tokens.join('')).toBe(answer.choices[0].text);
    expect(answer.choices[0].logprobs.text_offset[1]).toBe('def'.length);
  });

  it('streams a chunk per word, the usage chunk when asked, then [DONE]; refuses best_of with a stream', async () => {
    const events = (await (await post('/v1/completions', { model: 'm', prompt: [1, 2, 3], stream: true, stream_options: { include_usage: true } })).text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)) as Answer);
    expect(chunks.map((chunk) => chunk.choices.map((choice: Answer) => choice.text).join('')).join('')).toBe(' Hello from the emulator. You sent 3 tokens');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 8 } });
    const refused = await post('/v1/completions', { model: 'm', prompt: 'x', stream: true, best_of: 2 });
    expect(refused.status).toBe(400);
  });

  it('flags inputs with the marker word, one result per input, and refuses images on text moderation', async () => {
    const answer = (await (await post('/v1/moderations', { model: 'omni-moderation-latest', input: ['fine', 'so HARMFUL'] })).json()) as Answer;
    expect(answer.id).toMatch(/^modr-/);
    expect(answer.results.map((result: Answer) => result.flagged)).toEqual([false, true]);
    expect(answer.results[1].categories).toMatchObject({ harassment: true, violence: true, hate: false });
    expect(answer.results[1].category_applied_input_types.violence).toEqual(['text']);
    const again = (await (await post('/v1/moderations', { model: 'omni-moderation-latest', input: ['fine', 'so HARMFUL'] })).json()) as Answer;
    expect(again.results).toEqual(answer.results);
    const image = await post('/v1/moderations', { model: 'text-moderation-latest', input: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] });
    expect(image.status).toBe(400);
  });
});
