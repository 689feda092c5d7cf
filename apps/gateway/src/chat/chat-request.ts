import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type ChatCompletionRequestDto } from '@igw/contracts';
import { chatPromptTexts, checkTokenBudgets, NON_TEXT_PART_TOKENS, nonTextParts, normalizeToolSchemas, whenCounted, type BudgetVerdict } from '@igw/domain';
import { ANTHROPIC_DEFAULT_SEARCH_MAX_USES, ANTHROPIC_SEARCH_MAX_USES, ANTHROPIC_THINKING_BUDGETS, GEMINI_THINKING_BUDGETS } from '@igw/providers';
import { GatewayException } from '@igw/platform';

const CHAT_ENDPOINT_KIND = 'chat-completions';
/** Fields the gateway reads itself and never forwards. */
const GATEWAY_FIELDS = new Set(['provider', 'model', 'stream', 'stream_options', 'normalize_tool_schemas']);

export function assertChatModel(model: CatalogueModel): void {
  if (model.type.split('/').pop() !== CHAT_ENDPOINT_KIND) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} model: '${model.id}' is a ${model.type} model, not a chat model.`);
  }
}

/** The spec's message for a role the model does not take, naming the first offending message. */
export function assertRolesAllowed(model: CatalogueModel, messages: ReadonlyArray<{ role: string }>): void {
  const refused = model.routing.refusedRoles;
  if (!refused?.length) return;
  const index = messages.findIndex((message) => refused.includes(message.role));
  if (index >= 0) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `Unsupported value: 'messages[${index}].role' does not support '${messages[index].role}' with this model.`);
  }
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

/** The kinds of upstream a request may be sent to, for the ceiling's provider-specific parts. */
export type SourceKinds = ReadonlyArray<string>;

/**
 * The most the request can cost, in the units chat is priced by:
 * - input: no prompt has more tokens than its body has UTF-8 bytes (tool schemas included),
 *   plus an allowance per image or audio part (sent by URL, it is not in the body's bytes);
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
  sourceKinds: SourceKinds,
): Record<string, number> & { input_tokens: number; output_tokens: number } {
  const choices = choiceCount(body);
  const explicit = body.max_completion_tokens ?? body.max_tokens;
  const limit = explicit ?? model.info.outputMax ?? model.info.contextLength ?? 0;
  const reasoningBeyondLimit = sourceKinds.includes('google') || model.type.startsWith('google/') ? reasoningBudget(body) : 0;
  const units: Record<string, number> & { input_tokens: number; output_tokens: number } = {
    input_tokens: bodyBytes + nonTextParts(body.messages) * NON_TEXT_PART_TOKENS,
    output_tokens: choices * (Math.ceil(limit) + reasoningBeyondLimit),
  };
  const searches = webSearchCallsCeiling(body);
  if (searches > 0) units.web_search_calls = choices * searches;
  return units;
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

/** The OpenAI-shaped request for one source: the client's fields minus the gateway's own. */
export function upstreamRequest(body: ChatCompletionRequestDto, upstreamModel: string): Record<string, unknown> & { model: string; messages: unknown[] } {
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
  return request as Record<string, unknown> & { model: string; messages: unknown[] };
}
