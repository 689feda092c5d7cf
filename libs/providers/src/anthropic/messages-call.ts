import type { CallOptions, ProviderTarget } from '../provider.types';
import type { JsonRequest } from '../transport/http-client';
import { bedrockMessagesCall } from '../bedrock/bedrock.messages';
import { vertexMessagesCall } from '../vertex/vertex.messages';
import { anthropicHeaders, anthropicMessagesUrl } from './anthropic.chat';

/** A Messages request as the gateway built it: `model` and `stream` set, the `anthropic-beta` values to pass on apart. */
export interface MessagesBody {
  body: object;
  stream: boolean;
  beta?: string;
}

/** Where a Messages call goes and how it is carried, before the call options are added. */
export type MessagesWire = Pick<JsonRequest, 'url' | 'headers' | 'body'> & Partial<JsonRequest>;

/**
 * The one place that says how a Messages body reaches a source that speaks it: Anthropic's own
 * `/v1/messages`, Bedrock's InvokeModel (the model in the path, `anthropic_version` in the body),
 * or Vertex AI's rawPredict (likewise). The chat adapter and the native Messages path both call it.
 */
export function messagesCallOf(target: ProviderTarget, messages: MessagesBody, options: CallOptions): JsonRequest {
  const wire = messagesWireOf(target, messages);
  return {
    provider: target.provider,
    extraHeaders: target.headers,
    onRateLimits: target.onRateLimits,
    authorize: target.authorize,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    limits: target.limits,
    ...wire,
  };
}

function messagesWireOf(target: ProviderTarget, messages: MessagesBody): MessagesWire {
  switch (target.cloud?.kind) {
    case 'bedrock':
      return bedrockMessagesCall(target, messages);
    case 'vertex':
      return vertexMessagesCall(target, messages);
    default: {
      const headers = anthropicHeaders(target);
      if (messages.beta !== undefined) headers['anthropic-beta'] = messages.beta;
      return { url: anthropicMessagesUrl(target.baseUrl), headers, body: messages.body };
    }
  }
}
