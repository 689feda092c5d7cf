import type { MessagesBody, MessagesWire } from '../anthropic/messages-call';
import type { ProviderTarget } from '../provider.types';

/** InvokeModel / InvokeModelWithResponseStream with the Messages body (`anthropic_version: bedrock-2023-05-31`, no `model`). */
export function bedrockMessagesCall(_target: ProviderTarget, _messages: MessagesBody): MessagesWire {
  throw new Error('Bedrock InvokeModel is not built yet');
}
