import type { MessagesBody, MessagesWire } from '../anthropic/messages-call';
import type { ProviderTarget } from '../provider.types';

/** The Messages API version Bedrock's InvokeModel takes for Anthropic's models. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** `{baseUrl}/model/{id}/{action}`: the model id (a `:` in `…-v1:0`, a profile's `us.` prefix) encoded as one path segment. */
export function bedrockModelUrl(baseUrl: string, model: string, action: 'invoke' | 'invoke-with-response-stream' | 'converse' | 'converse-stream'): string {
  return `${baseUrl.replace(/\/+$/, '')}/model/${encodeURIComponent(model)}/${action}`;
}

/**
 * InvokeModel / InvokeModelWithResponseStream with the Messages body: the model is in the path,
 * `stream` in the action, `anthropic_version` in the body and the `anthropic-beta` values as the
 * body's `anthropic_beta` list. A stream is AWS's event stream, its `chunk` frames unwrapped to
 * Anthropic's own events, so the Messages readers take it unchanged.
 */
export function bedrockMessagesCall(target: ProviderTarget, messages: MessagesBody): MessagesWire {
  const { model: _model, stream: _stream, ...rest } = messages.body as Record<string, unknown>;
  const body: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  const betas = messages.beta
    ?.split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  if (betas !== undefined && betas.length > 0) body.anthropic_beta = betas;
  return {
    url: bedrockModelUrl(target.baseUrl, target.model, messages.stream ? 'invoke-with-response-stream' : 'invoke'),
    headers: { 'content-type': 'application/json' },
    body,
    ...(messages.stream && { framing: 'aws-event-stream' as const }),
  };
}
