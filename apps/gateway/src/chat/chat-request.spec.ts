import type { CatalogueModel, ChatCompletionRequestDto } from '@igw/contracts';
import { priceUsage } from '@igw/domain';
import { estimatePromptTokens, NON_TEXT_PART_TOKENS } from '@igw/tokenizer';
import {
  assertCacheLifetimesPriced,
  assertOperatorAccountFields,
  assertPromptFitsContext,
  chatCostCeilingUnits,
  pricedAtServiceTier,
  reasoningBudget,
  webSearchCallsCeiling,
} from './chat-request';

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

  it('holds at least the model\'s context window as input for a request with a document, whose pages its bytes do not bound', () => {
    const file = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } };
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'summarise' }, file] }];
    expect(chatCostCeilingUnits(model(), body({ messages, max_tokens: 10 } as never), 300, ['anthropic-messages']).input_tokens).toBe(100_000);
    // A body larger than the window still holds its bytes.
    expect(chatCostCeilingUnits(model(), body({ messages, max_tokens: 10 } as never), 250_000, ['anthropic-messages']).input_tokens).toBe(250_000 + NON_TEXT_PART_TOKENS);
  });

  it('adds the reasoning budget per choice where the upstream may spend it beyond the output limit (Gemini)', () => {
    const gemini = model({ id: 'test/gemini', type: 'google/chat-completions' });
    expect(chatCostCeilingUnits(gemini, body({ max_tokens: 1_000, reasoning: { max_tokens: 5_000 } }), 10, ['gemini']).output_tokens).toBe(6_000);
    expect(chatCostCeilingUnits(gemini, body({ n: 2, max_tokens: 1_000, reasoning_effort: 'high' }), 10, ['gemini']).output_tokens).toBe(2 * (1_000 + 16_384));
    // OpenAI and Anthropic count reasoning inside max_tokens: nothing more is held.
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 1_000, reasoning: { max_tokens: 5_000 } }), 10, ['openai', 'anthropic-messages']).output_tokens).toBe(1_000);
  });

  it('holds the most web searches the request can run, per choice, only with search on', () => {
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 10 }), 10, ['openai'])).not.toHaveProperty('web_search_calls');
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 10, enable_search: true }), 10, ['anthropic-messages']).web_search_calls).toBe(10);
    expect(chatCostCeilingUnits(model(), body({ max_tokens: 10, enable_search: true, search_options: { search_strategy: 'turbo' } }), 10, ['anthropic-messages']).web_search_calls).toBe(1);
    expect(chatCostCeilingUnits(model(), body({ n: 3, max_tokens: 10, web_search_options: {} }), 10, ['openai']).web_search_calls).toBe(30);
  });
});

describe('prices that depend on the request', () => {
  const priority = [
    { unit: 'input_tokens', price: 2, per: 1_000_000 },
    { unit: 'output_tokens', price: 8, per: 1_000_000 },
  ];
  const tiered = model({
    pricing: {
      kind: 'fixed',
      currency: 'USD',
      units: [
        { unit: 'input_tokens', price: 1, per: 1_000_000 },
        { unit: 'input_tokens', price: 2, per: 1_000_000, promptTokensAbove: 200_000 },
        { unit: 'cache_write_input_tokens', price: 1.25, per: 1_000_000 },
        { unit: 'cache_write_1h_input_tokens', price: 2, per: 1_000_000 },
        { unit: 'output_tokens', price: 4, per: 1_000_000 },
      ],
      dimensions: ['service_tier'],
      variants: [{ dimensions: { service_tier: 'priority' }, units: priority }],
    },
  });
  const cached = (ttl?: '5m' | '1h') => body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'long document', cache_control: { type: 'ephemeral', ...(ttl && { ttl }) } }] }] } as never);

  it('prices a request at the variant of its service tier, the standard tiers at the top-level units', () => {
    for (const tier of [undefined, 'auto', 'default']) expect(pricedAtServiceTier(tiered, body({ service_tier: tier }))).toBe(tiered);
    const atPriority = pricedAtServiceTier(tiered, body({ service_tier: 'priority' }));
    expect(atPriority.pricing?.units).toBe(priority);
    expect(atPriority).toMatchObject({ id: tiered.id, routing: tiered.routing });
    // One copy per entry and tier: its prices are prepared once.
    expect(pricedAtServiceTier(tiered, body({ service_tier: 'priority' }))).toBe(atPriority);
  });

  it('refuses a service tier the catalogue does not price, naming those it does', () => {
    expect(() => pricedAtServiceTier(tiered, body({ service_tier: 'flex' }))).toThrow(
      "Body validation error! service_tier: the catalogue has no price for this tier on test/mini (a tier changes what the upstream charges). Expected one of 'auto', 'default', 'priority'. Received 'flex'",
    );
    expect(() => pricedAtServiceTier(model(), body({ service_tier: 'priority' }))).toThrow(/Expected one of 'auto', 'default'\. Received 'priority'$/);
  });

  /** An entry that charges five-minute cache writes and has no price for one-hour ones. */
  const fiveMinuteWritesOnly = model({
    pricing: {
      kind: 'fixed',
      currency: 'USD',
      units: [
        { unit: 'input_tokens', price: 1, per: 1_000_000 },
        { unit: 'cache_write_input_tokens', price: 1.25, per: 1_000_000 },
        { unit: 'output_tokens', price: 4, per: 1_000_000 },
      ],
    },
  });

  it('refuses one-hour cache writes where the entry charges cache writes but has no one-hour price', () => {
    expect(() => assertCacheLifetimesPriced(tiered, cached('1h'))).not.toThrow();
    expect(() => assertCacheLifetimesPriced(fiveMinuteWritesOnly, cached('5m'))).not.toThrow();
    expect(() => assertCacheLifetimesPriced(fiveMinuteWritesOnly, cached('1h'))).toThrow(
      "Body validation error! messages[0].content[0].cache_control.ttl: the catalogue has no price for one-hour cache writes on test/mini (they cost more than five-minute ones). Expected '5m'. Received '1h'",
    );
    const onTool = body({ tools: [{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'g' }, cache_control: { type: 'ephemeral', ttl: '1h' } }] } as never);
    expect(() => assertCacheLifetimesPriced(fiveMinuteWritesOnly, onTool)).toThrow(/^Body validation error! tools\[1\]\.cache_control\.ttl: /);
  });

  it('takes one-hour cache writes where the entry charges no cache writes (OpenAI: free to write), held and billed as input', () => {
    // model() prices input and output only, as the catalogue's OpenAI entries (gpt-4o-mini) do.
    expect(() => assertCacheLifetimesPriced(model(), cached('1h'))).not.toThrow();
    const onTool = body({ tools: [{ type: 'function', function: { name: 'g' }, cache_control: { type: 'ephemeral', ttl: '1h' } }] } as never);
    expect(() => assertCacheLifetimesPriced(model(), onTool)).not.toThrow();
    // The writes are billed as input tokens (chatUnits), so the hold is the prompt at the input price.
    expect(chatCostCeilingUnits(model(), { ...cached('1h'), max_tokens: 10 }, 500, ['openai'])).toEqual({ input_tokens: 500, output_tokens: 10 });
  });

  it('holds the prompt at the dearest input price the request may incur', () => {
    expect(chatCostCeilingUnits(tiered, body({ max_tokens: 10 }), 500, ['anthropic-messages'])).toEqual({ input_tokens: 500, output_tokens: 10 });
    expect(chatCostCeilingUnits(tiered, cached('5m'), 500, ['anthropic-messages'])).toMatchObject({ input_tokens: 0, cache_write_input_tokens: 500 });
    expect(chatCostCeilingUnits(tiered, cached('1h'), 500, ['anthropic-messages'])).toMatchObject({ input_tokens: 0, cache_write_1h_input_tokens: 500 });
    // Over 200,000 tokens the prompt's own price (2) is above the five-minute writes' (1.25).
    expect(chatCostCeilingUnits(tiered, cached('5m'), 300_000, ['anthropic-messages'])).toMatchObject({ input_tokens: 300_000 });
  });

  it('holds a prompt that may pass a prompt-size threshold at the dearer prices', () => {
    const units = chatCostCeilingUnits(tiered, body({ max_tokens: 1_000 }), 300_000, ['gemini']);
    // 300,000 × $2/M + 1,000 × $4/M.
    expect(priceUsage(tiered.pricing, units, 1).usd).toBe('0.604');
  });
});

describe('assertOperatorAccountFields', () => {
  const nothingAllowed = { ALLOW_UPSTREAM_FILE_IDS: false, ALLOW_UPSTREAM_STORE: false, ALLOW_UPSTREAM_METADATA: false };
  const everythingAllowed = { ALLOW_UPSTREAM_FILE_IDS: true, ALLOW_UPSTREAM_STORE: true, ALLOW_UPSTREAM_METADATA: true };
  const withFile = (file: Record<string, unknown>) => body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', file }] }] } as never);

  it('refuses each field that reaches the operator\'s provider account, naming it and its setting', () => {
    expect(() => assertOperatorAccountFields(body({ store: true }), nothingAllowed)).toThrow(
      "Body validation error! store: not accepted by this gateway: it keeps the completion in the operator's own provider account (the operator allows it with ALLOW_UPSTREAM_STORE=true).",
    );
    expect(() => assertOperatorAccountFields(body({ metadata: { team: 'a' } }), nothingAllowed)).toThrow(/^Body validation error! metadata: .*ALLOW_UPSTREAM_METADATA=true\)\.$/);
    expect(() => assertOperatorAccountFields(withFile({ file_id: 'file-abc' }), nothingAllowed)).toThrow(
      /^Body validation error! messages\[0\]\.content\[1\]\.file\.file_id: .*ALLOW_UPSTREAM_FILE_IDS=true\); send the file itself as file_data\.$/,
    );
  });

  it('lets through what stays out of that account, and each field its setting allows', () => {
    for (const request of [body({ store: false }), withFile({ file_data: 'data:application/pdf;base64,JVBE' }), body()]) {
      expect(() => assertOperatorAccountFields(request, nothingAllowed)).not.toThrow();
    }
    const all = body({ store: true, metadata: { team: 'a' }, messages: withFile({ file_id: 'file-abc' }).messages });
    expect(() => assertOperatorAccountFields(all, everythingAllowed)).not.toThrow();
    expect(() => assertOperatorAccountFields(all, { ...everythingAllowed, ALLOW_UPSTREAM_METADATA: false })).toThrow(/^Body validation error! metadata: /);
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
});
