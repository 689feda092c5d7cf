import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { AnthropicChatAdapter } from './anthropic.chat';

/** Anthropic's Messages API: chat alone (no embeddings or media API). */
export const ANTHROPIC_KIND: ProviderKindDefinition = {
  kind: 'anthropic',
  wireApi: () => 'anthropic-messages',
  providers: [builtInProvider('anthropic', 'anthropic', { defaultBaseUrl: 'https://api.anthropic.com', emulatorPath: '' })],
  chat: new AnthropicChatAdapter(),
};
