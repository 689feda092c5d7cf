import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type ChatCompletionRequestDto } from '@igw/contracts';
import { estimatePromptTokens, normalizeToolSchemas } from '@igw/domain';
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

/**
 * Refuses, before any upstream call, a request asking for more output than the model can
 * give or whose prompt cannot fit its context. Tokenizing is skipped when even one token per
 * UTF-8 byte would fit, so ordinary requests pay nothing for the check.
 */
export function assertWithinModelLimits(model: CatalogueModel, body: ChatCompletionRequestDto, bodyBytes: number): void {
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const field = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const { outputMax, contextLength } = model.info;
  if (requested !== undefined && outputMax && requested > outputMax) {
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} ${field}: Expected at most ${outputMax} for ${model.id} (its output limit). Received ${requested}`,
    );
  }
  if (!contextLength || bodyBytes + (requested ?? 0) <= contextLength) return;
  const promptTokens = estimatePromptTokens(body.messages);
  if (promptTokens + (requested ?? 0) > contextLength) {
    const asked = requested ? ` plus the ${requested} output tokens asked for` : '';
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} messages: the prompt is about ${promptTokens} tokens${asked}, more than the ${contextLength}-token context of ${model.id}.`,
    );
  }
}

/** Tokens assumed for a non-text part (an image or audio by URL): more than any listed model charges for one. */
const NON_TEXT_PART_TOKENS = 3_000;

/**
 * The most the request can cost, in the units chat is priced by: no prompt has more tokens
 * than its body has UTF-8 bytes (plus an allowance per image or audio part given by URL),
 * and no answer more than the output asked for, else the model's output limit.
 */
export function chatCostCeilingUnits(model: CatalogueModel, body: ChatCompletionRequestDto, bodyBytes: number): Record<string, number> {
  let nonTextParts = 0;
  for (const message of body.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type?: unknown }>) if (part?.type !== 'text') nonTextParts++;
  }
  const output = body.max_completion_tokens ?? body.max_tokens ?? model.info.outputMax ?? model.info.contextLength ?? 0;
  return { input_tokens: bodyBytes + nonTextParts * NON_TEXT_PART_TOKENS, output_tokens: output };
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
