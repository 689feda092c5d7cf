import type { CatalogueModel, ChatCompletionRequestDto } from '@igw/contracts';
import { estimatePromptTokens, NON_TEXT_PART_TOKENS, priceUsage, tokenCountPool } from '@igw/domain';
import { assertPromptFitsContext, chatCostCeilingUnits, reasoningBudget, webSearchCallsCeiling } from './chat-request';

const model = (overrides: Partial<CatalogueModel> = {}): CatalogueModel => ({
  id: 'test/mini',
  aliases: [],
  type: 'openai/chat-completions',
  info: { name: 'Mini', developer: 'Test', description: '', contextLength: 100_000, outputMax: 4_000 },
  tags: [],
  pricing: {
    kind: 'fixed',
    currency: 'USD',
    units: [
      { unit: 'input_tokens', price: 1, per: 1_000_000 },
      { unit: 'output_tokens', price: 4, per: 1_000_000 },
      { unit: 'web_search_calls', price: 10, per: 1_000 },
    ],
  },
  routing: { sources: [{ provider: 'openai', model: 'mini' }] },
  ...overrides,
});

const body = (fields: Partial<ChatCompletionRequestDto> = {}): ChatCompletionRequestDto => ({ model: 'mini', messages: [{ role: 'user', content: 'hi' }], ...fields }) as ChatCompletionRequestDto;

describe('chatCostCeilingUnits', () => {
  it('holds the body bytes as input and one output ceiling for one choice', () => {
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 100 }), 500, ['openai'])).toEqual({ input_tokens: 500, output_tokens: 100 });
    // Without a limit asked for: the model's output limit.
    expect(chatCostCeilingUnits(model(), body(), 500, ['openai'])).toEqual({ input_tokens: 500, output_tokens: 4_000 });
  });

  it('holds n × the output ceiling: n = 128 at 1,000 tokens is 128,000 output tokens', () => {
    expect(chatCostCeilingUnits(model(), body({ n: 128, max_tokens: 1_000 }), 500, ['openai']).output_tokens).toBe(128_000);
    expect(chatCostCeilingUnits(model(), body({ n: 64, max_completion_tokens: 1_000 }), 500, ['openai']).output_tokens).toBe(64_000);
    // n = 64 × 1,000 output tokens at $4/M is $0.256: more than a $0.01 account has.
    const units = chatCostCeilingUnits(model(), body({ n: 64, max_tokens: 1_000 }), 100, ['openai']);
    expect(priceUsage(model().pricing, units, 1).usd).toBe('0.2561');
  });

  it('adds an allowance per image or audio part given by URL (not in the body bytes)', () => {
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://x/a.png' } }, { type: 'input_audio' }] }];
    expect(chatCostCeilingUnits(model(), body({ messages, max_tokens: 10 } as never), 300, ['openai']).input_tokens).toBe(300 + 2 * NON_TEXT_PART_TOKENS);
  });

  it('adds the reasoning budget per choice where the upstream may spend it beyond the output limit (Gemini)', () => {
    const gemini = model({ id: 'test/gemini', type: 'google/chat-completions' });
    expect(chatCostCeilingUnits(gemini, body({ max_tokens: 1_000, reasoning: { max_tokens: 5_000 } }), 10, ['google']).output_tokens).toBe(6_000);
    expect(chatCostCeilingUnits(gemini, body({ n: 2, max_tokens: 1_000, reasoning_effort: 'high' }), 10, ['google']).output_tokens).toBe(2 * (1_000 + 16_384));
    // OpenAI and Anthropic count reasoning inside max_tokens: nothing more is held.
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 1_000, reasoning: { max_tokens: 5_000 } }), 10, ['openai', 'anthropic']).output_tokens).toBe(1_000);
  });

  it('holds the most web searches the request can run, per choice, only with search on', () => {
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 10 }), 10, ['openai'])).not.toHaveProperty('web_search_calls');
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 10, enable_search: true }), 10, ['anthropic']).web_search_calls).toBe(10);
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 10, enable_search: true, search_options: { search_strategy: 'turbo' } }), 10, ['anthropic']).web_search_calls).toBe(1);
    expect(chatCostCeilingUnits(model(), body({ n: 3, max_tokens: 10, web_search_options: {} }), 10, ['openai']).web_search_calls).toBe(30);
  });
});

describe('reasoningBudget and webSearchCallsCeiling', () => {
  it('reads the budget from reasoning.max_tokens, else the effort', () => {
    expect(reasoningBudget(body())).toBe(0);
    expect(reasoningBudget(body({ reasoning_effort: 'none' }))).toBe(0);
    expect(reasoningBudget(body({ reasoning_effort: 'low' }))).toBe(1_024);
    expect(reasoningBudget(body({ reasoning: { effort: 'medium' } }))).toBe(4_096);
    expect(reasoningBudget(body({ reasoning: { max_tokens: 777 } }))).toBe(777);
  });

  it('counts the strategy\'s searches, else the default the Anthropic translation sends', () => {
    expect(webSearchCallsCeiling(body({ enable_search: false }))).toBe(0);
    expect(webSearchCallsCeiling(body({ enable_search: true, search_options: { search_strategy: 'max' } }))).toBe(5);
    expect(webSearchCallsCeiling(body({ enable_search: true }))).toBe(10);
  });
});

describe('assertPromptFitsContext', () => {
  afterAll(() => tokenCountPool.close());
  const withContext = (contextLength: number) => model({ info: { name: 'Mini', developer: 'Test', description: '', contextLength, outputMax: 4_000 } });
  const prompt = (content: string, fields: Partial<ChatCompletionRequestDto> = {}) => body({ messages: [{ role: 'system', content }, { role: 'user', content: 'Summarize.' }], ...fields });
  const bytesOf = (request: ChatCompletionRequestDto) => Buffer.byteLength(JSON.stringify(request));
  const sentences = (count: number) => 'The gateway reads the prompt and sends it on. '.repeat(count);

  it('returns at once, counting nothing, while the body has no more bytes than the context has tokens', () => {
    const request = prompt(sentences(100));
    expect(assertPromptFitsContext(withContext(bytesOf(request)), request, bytesOf(request))).toBeUndefined();
  });

  it('counts a short prompt on the spot: no Promise, the spec message when it is too long', () => {
    const request = prompt(sentences(20), { max_tokens: 50 });
    const tokens = estimatePromptTokens(request.messages);
    expect(assertPromptFitsContext(withContext(tokens + 50), request, bytesOf(request))).toBeUndefined();
    expect(() => assertPromptFitsContext(withContext(tokens + 49), request, bytesOf(request))).toThrow(
      `Body validation error! messages: the prompt is about ${tokens} tokens plus the 50 output tokens asked for, more than the ${tokens + 49}-token context of test/mini.`,
    );
  });

  it('counts a long prompt in the worker pool, returning a Promise only then', async () => {
    const request = prompt(sentences(2_000));
    const tokens = estimatePromptTokens(request.messages);
    const fits = assertPromptFitsContext(withContext(tokens), request, bytesOf(request));
    expect(fits).toBeInstanceOf(Promise);
    await expect(fits).resolves.toBeUndefined();
    // Far over the context: refused once the part counted says so, with the tokens known by then.
    await expect(assertPromptFitsContext(withContext(1_000), request, bytesOf(request))).rejects.toThrow(
      /^Body validation error! messages: the prompt is at least \d+ tokens, more than the 1000-token context of test\/mini\.$/,
    );
  });
});
