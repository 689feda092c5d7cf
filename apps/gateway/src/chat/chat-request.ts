import { HttpStatus } from '@nestjs/common';
import { CHAT_PRICE_DIMENSION, ErrorMessages, STANDARD_SERVICE_TIERS, type CatalogueModel, type ChatCompletionRequestDto, type PriceUnit } from '@igw/contracts';
import { expectedOneOf } from '@igw/validation';
import type { JsonSource } from '@igw/json';
import { normalizeToolSchemas, priceFor } from '@igw/domain';
import { chatPromptTexts, checkTokenBudgets, NON_TEXT_PART_TOKENS, nonTextParts, whenCounted, type BudgetVerdict } from '@igw/tokenizer';
import { ANTHROPIC_DEFAULT_SEARCH_MAX_USES, ANTHROPIC_SEARCH_MAX_USES, ANTHROPIC_THINKING_BUDGETS, GEMINI_THINKING_BUDGETS, type UpstreamChatRequest, type WireApi } from '@igw/providers';
import { GatewayException } from '@igw/http';
import type { Environment } from '@igw/config';

/** Fields the gateway reads itself and never forwards. */
const GATEWAY_FIELDS = new Set(['provider', 'model', 'stream', 'stream_options', 'normalize_tool_schemas']);

/** The spec's message for a role the model does not take, naming the first offending message. */
export function assertRolesAllowed(model: CatalogueModel, messages: ReadonlyArray<{ role: string }>): void {
  const refused = model.routing.refusedRoles;
  if (!refused?.length) return;
  const index = messages.findIndex((message) => refused.includes(message.role));
  if (index >= 0) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `Unsupported value: 'messages[${index}].role' does not support '${messages[index].role}' with this model.`);
  }
}

/** The operator's settings for chat fields that reach its own provider account. */
export type OperatorAccountSettings = Pick<Environment, 'ALLOW_UPSTREAM_FILE_IDS' | 'ALLOW_UPSTREAM_STORE' | 'ALLOW_UPSTREAM_METADATA'>;

/**
 * Refuses the fields that would act in the operator's own provider account (the upstream's
 * project the gateway's key belongs to) unless the operator allows them: a file part naming an
 * uploaded file by `file_id` (any file of that project), `store: true` (the completion is kept
 * there) and `metadata` (attached to what is kept there).
 */
export function assertOperatorAccountFields(body: ChatCompletionRequestDto, settings: OperatorAccountSettings): void {
  const refuse = (field: string, why: string, setting: keyof OperatorAccountSettings, instead = ''): never => {
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} ${field}: not accepted by this gateway: ${why} in the operator's own provider account (the operator allows it with ${setting}=true)${instead}.`,
    );
  };
  if (body.store === true && !settings.ALLOW_UPSTREAM_STORE) refuse('store', 'it keeps the completion', 'ALLOW_UPSTREAM_STORE');
  if (body.metadata !== undefined && body.metadata !== null && !settings.ALLOW_UPSTREAM_METADATA) refuse('metadata', 'it is attached to what the provider keeps', 'ALLOW_UPSTREAM_METADATA');
  if (settings.ALLOW_UPSTREAM_FILE_IDS) return;
  body.messages.forEach((message, index) => {
    const content: unknown = message.content;
    if (!Array.isArray(content)) return;
    content.forEach((part: { type?: unknown; file?: { file_id?: unknown } | null } | null, partIndex) => {
      if (part?.type === 'file' && part.file?.file_id !== undefined && part.file.file_id !== null) {
        refuse(`messages[${index}].content[${partIndex}].file.file_id`, 'a file id names a file uploaded', 'ALLOW_UPSTREAM_FILE_IDS', '; send the file itself as file_data');
      }
    });
  });
}

/** Per catalogue entry, its copy priced at each service tier it prices (entries are replaced, never changed, when the catalogue changes). */
const entriesByServiceTier = new WeakMap<CatalogueModel, Map<string, CatalogueModel>>();

/**
 * The entry whose prices the request is charged: a service tier changes what the upstream
 * charges (OpenAI's `priority` about twice the standard price, `flex` about half), so a tier
 * other than the standard ones is priced by the entry's variant for it, and refused when it has
 * none. The returned copy's units are the tier's (the hold, the bill and the usage event read them).
 */
export function pricedAtServiceTier(model: CatalogueModel, body: ChatCompletionRequestDto): CatalogueModel {
  const tier = body.service_tier;
  if (tier === undefined || tier === null || STANDARD_SERVICE_TIERS.includes(tier)) return model;
  let byTier = entriesByServiceTier.get(model);
  const known = byTier?.get(tier);
  if (known) return known;
  const variants = model.pricing?.variants ?? [];
  const variant = variants.find((candidate) => candidate.dimensions[CHAT_PRICE_DIMENSION] === tier);
  if (!model.pricing || !variant) {
    const priced = [...STANDARD_SERVICE_TIERS, ...variants.map((candidate) => candidate.dimensions[CHAT_PRICE_DIMENSION]).filter((name) => name !== undefined)];
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} service_tier: the catalogue has no price for this tier on ${model.id} (a tier changes what the upstream charges). ${expectedOneOf(priced, tier)}`,
    );
  }
  const entry: CatalogueModel = { ...model, pricing: { ...model.pricing, units: variant.units } };
  if (!byTier) entriesByServiceTier.set(model, (byTier = new Map()));
  byTier.set(tier, entry);
  return entry;
}

/** The unit one-hour cache writes are priced by (five-minute writes: `cache_write_input_tokens`). */
const ONE_HOUR_CACHE_WRITES = 'cache_write_1h_input_tokens';

/** Whether the entry prices cache writes apart from input (`cache_write_input_tokens`, `cache_write_1h_input_tokens`). */
function chargesCacheWrites(prices: readonly PriceUnit[]): boolean {
  return prices.some((price) => price.unit.startsWith('cache_write_'));
}

/** Where a request asks for prompt caching: whether anywhere, and the path of its first one-hour `cache_control`. */
interface CacheControlUse {
  any: boolean;
  oneHourAt?: string;
}

function cacheControlUse(body: ChatCompletionRequestDto): CacheControlUse {
  const use: CacheControlUse = { any: false };
  const see = (control: unknown, path: string): boolean => {
    if (control === undefined || control === null) return false;
    use.any = true;
    if ((control as { ttl?: unknown }).ttl !== '1h') return false;
    use.oneHourAt = `${path}.cache_control.ttl`;
    return true;
  };
  const messages = body.messages;
  for (let index = 0; index < messages.length; index++) {
    const content: unknown = messages[index].content;
    if (!Array.isArray(content)) continue;
    for (let part = 0; part < content.length; part++) {
      if (see((content[part] as { cache_control?: unknown } | null)?.cache_control, `messages[${index}].content[${part}]`)) return use;
    }
  }
  const tools = (body.tools ?? []) as ReadonlyArray<{ cache_control?: unknown } | null>;
  for (let index = 0; index < tools.length; index++) if (see(tools[index]?.cache_control, `tools[${index}]`)) return use;
  return use;
}

/**
 * One-hour cache writes cost more than five-minute ones (Anthropic: 2× the input price against
 * 1.25×): a request asking for them is refused where the entry prices cache writes but not
 * one-hour ones, since they would be billed below their cost. An entry that prices no cache
 * write at all is of a provider that charges none (OpenAI caches by itself and bills writes as
 * plain input): there the lifetime changes no price, and the request is taken.
 */
export function assertCacheLifetimesPriced(model: CatalogueModel, body: ChatCompletionRequestDto): void {
  const prices = model.pricing?.units ?? [];
  if (!chargesCacheWrites(prices) || prices.some((unit) => unit.unit === ONE_HOUR_CACHE_WRITES)) return;
  const { oneHourAt } = cacheControlUse(body);
  if (oneHourAt === undefined) return;
  throw new GatewayException(
    HttpStatus.BAD_REQUEST,
    `${ErrorMessages.bodyValidationPrefix} ${oneHourAt}: the catalogue has no price for one-hour cache writes on ${model.id} (they cost more than five-minute ones). ${expectedOneOf(['5m'], '1h')}`,
  );
}

/** Refuses, before any upstream call, a request asking for more output than the model can give. Costs nothing. */
export function assertOutputWithinModelLimit(model: CatalogueModel, body: ChatCompletionRequestDto): void {
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const field = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const { outputMax } = model.info;
  if (requested !== undefined && outputMax && requested > outputMax) {
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} ${field}: Expected at most ${outputMax} for ${model.id} (its output limit). Received ${requested}`,
    );
  }
}

/**
 * Refuses a prompt that cannot fit the model's context. Nothing is counted while the body's
 * bytes would fit (no prompt has more tokens than bytes), nor where bounds on the prompt's texts
 * decide (token-budget.ts); the rest is counted once the key has been admitted (it can pay for
 * them) and before anything is sent, on the event loop when it is a little text, else in the
 * token counting workers (a Promise then).
 */
export function assertPromptFitsContext(model: CatalogueModel, body: ChatCompletionRequestDto, bodyBytes: number): void | Promise<void> {
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const { contextLength } = model.info;
  if (!contextLength || bodyBytes + (requested ?? 0) <= contextLength) return;
  // Tool schemas, tool calls and response formats take context as the messages do. Images are
  // left out: what one takes is the upstream's to say, and the hold's allowance would over-refuse.
  const { texts, formatTokens } = chatPromptTexts(body);
  const verdicts = checkTokenBudgets([{ texts, budget: contextLength - (requested ?? 0) - formatTokens }]);
  const refuseIfTooLong = ([verdict]: BudgetVerdict[]) => {
    if (verdict.fits) return;
    const asked = requested ? ` plus the ${requested} output tokens asked for` : '';
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} messages: the prompt is ${verdict.exact ? 'about' : 'at least'} ${verdict.tokens + formatTokens} tokens${asked}, more than the ${contextLength}-token context of ${model.id}.`,
    );
  };
  return whenCounted(verdicts, refuseIfTooLong);
}

/** The APIs a request may be sent through (wireApiOf), for the ceiling's provider-specific parts. */
export type SourceApis = ReadonlyArray<WireApi>;

/**
 * The most the request can cost, in the units chat is priced by:
 * - input: no prompt has more tokens than its body has UTF-8 bytes (tool schemas included),
 *   plus an allowance per image or audio part (sent by URL, it is not in the body's bytes); with
 *   a document (a `file` part), at least the model's context window,
 *   all at the dearest input price the request may incur (cache writes where it asks for
 *   caching) and at the prompt-size prices of a prompt that long;
 * - output: `n` choices, each at most the output asked for, else the model's output limit
 *   (reasoning and audio tokens are output tokens, inside that limit), plus the reasoning
 *   budget asked for where the upstream may spend it beyond the limit (Gemini documents its
 *   thinking budget apart from `maxOutputTokens`);
 * - web searches: with search on, `n` × the most searches one answer may run.
 */
export function chatCostCeilingUnits(
  model: CatalogueModel,
  body: ChatCompletionRequestDto,
  bodyBytes: number,
  sourceApis: SourceApis,
): Record<string, number> & { input_tokens: number; output_tokens: number } {
  const choices = choiceCount(body);
  const explicit = body.max_completion_tokens ?? body.max_tokens;
  const limit = explicit ?? model.info.outputMax ?? model.info.contextLength ?? 0;
  const reasoningBeyondLimit = sourceApis.includes('gemini') || model.type.startsWith('google/') ? reasoningBudget(body) : 0;
  const fromBody = bodyBytes + nonTextParts(body.messages) * NON_TEXT_PART_TOKENS;
  // A document's pages cost what the provider's reading of them costs, which its bytes do not bound
  // (many pages drawn from one small stream, each read as text and as an image): the most it can
  // cost is a prompt as long as the model's context window.
  const input = hasDocument(body.messages) ? Math.max(fromBody, model.info.contextLength ?? 0) : fromBody;
  const units: Record<string, number> & { input_tokens: number; output_tokens: number } = {
    input_tokens: 0,
    output_tokens: choices * (Math.ceil(limit) + reasoningBeyondLimit),
  };
  units[dearestInputUnit(model.pricing?.units ?? [], body, input)] = input;
  const searches = webSearchCallsCeiling(body);
  if (searches > 0) units.web_search_calls = choices * searches;
  return units;
}

/** Whether a message carries a document (a `file` part: a PDF or text file the provider reads page by page). */
function hasDocument(messages: ChatCompletionRequestDto['messages']): boolean {
  return messages.some((message) => Array.isArray(message.content) && (message.content as Array<{ type?: unknown } | null>).some((part) => part?.type === 'file'));
}

/**
 * The input unit the ceiling's prompt is priced at: `input_tokens`, or a cache write unit the
 * request may incur (it asks for caching) where that is dearer for a prompt of `promptTokens`.
 */
function dearestInputUnit(prices: readonly PriceUnit[], body: ChatCompletionRequestDto, promptTokens: number): string {
  // Where no cache write is priced, writes are billed as input (chatUnits): input_tokens is the dearest.
  const caching = chargesCacheWrites(prices) ? cacheControlUse(body) : undefined;
  if (!caching?.any) return 'input_tokens';
  const candidates = ['input_tokens', 'cache_write_input_tokens', ...(caching.oneHourAt !== undefined ? [ONE_HOUR_CACHE_WRITES] : [])];
  let dearest = 'input_tokens';
  for (const unit of candidates) if (unitPriceAt(prices, unit, promptTokens) > unitPriceAt(prices, dearest, promptTokens)) dearest = unit;
  return dearest;
}

/** USD per unit of `unit` for a prompt of `promptTokens` (its prompt-size price where one applies); 0 where unpriced. */
function unitPriceAt(prices: readonly PriceUnit[], unit: string, promptTokens: number): number {
  const price = priceFor(prices, unit, promptTokens);
  return price ? price.price / price.per : 0;
}

/** `n`, read defensively: at least one choice, a fraction rounded up. */
function choiceCount(body: ChatCompletionRequestDto): number {
  const n = body.n;
  return typeof n === 'number' && Number.isFinite(n) && n > 1 ? Math.ceil(n) : 1;
}

/** The thinking budget the request asks for, in tokens: `reasoning.max_tokens`, else its effort's budget. */
export function reasoningBudget(body: ChatCompletionRequestDto): number {
  const explicit = body.reasoning?.max_tokens;
  if (typeof explicit === 'number' && Number.isFinite(explicit) && explicit > 0) return Math.ceil(explicit);
  const effort = body.reasoning?.effort ?? body.reasoning_effort;
  if (effort === undefined || effort === 'none') return 0;
  return Math.max(GEMINI_THINKING_BUDGETS[effort] ?? 0, ANTHROPIC_THINKING_BUDGETS[effort as keyof typeof ANTHROPIC_THINKING_BUDGETS] ?? 0);
}

/**
 * The most web searches one answer may run: Anthropic's `max_uses`, which the gateway always
 * sends (from `search_options.search_strategy`, else its default); OpenAI's search models run
 * one per request; Gemini sets no limit of its own, and is assumed to stay within the same.
 */
export function webSearchCallsCeiling(body: ChatCompletionRequestDto): number {
  if (body.enable_search !== true && body.web_search_options === undefined) return 0;
  const strategy = body.search_options?.search_strategy;
  return strategy !== undefined ? ANTHROPIC_SEARCH_MAX_USES[strategy] : ANTHROPIC_DEFAULT_SEARCH_MAX_USES;
}

/**
 * The OpenAI-shaped request for one source: the client's fields minus the gateway's own, with
 * the client's own text of its messages when the route kept it.
 */
export function upstreamRequest(body: ChatCompletionRequestDto, upstreamModel: string, messagesJson?: JsonSource): UpstreamChatRequest {
  // Built in one object (no copies): the client's fields in their order, then `model`.
  const fields = body as unknown as Record<string, unknown>;
  const request: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value !== undefined && !GATEWAY_FIELDS.has(key)) request[key] = value;
  }
  if (body.normalize_tool_schemas === true && Array.isArray(request.tools)) request.tools = normalizeToolSchemas(request.tools);
  request.model = upstreamModel;
  request.messages = body.messages;
  if (messagesJson !== undefined) request.messagesJson = messagesJson;
  return request as UpstreamChatRequest;
}
