import { NoChatAdapter } from '../no-chat.adapter';
import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { STABILITY_DEFAULT_BASE_URL, StabilityImagesAdapter } from './stability.images';

/** Stability AI: image generation, no chat. */
export const STABILITY_KIND: ProviderKindDefinition = {
  kind: 'stability',
  wireApi: () => 'openai',
  providers: [builtInProvider('stability', 'stability', { defaultBaseUrl: STABILITY_DEFAULT_BASE_URL, emulatorPath: '' })],
  chat: new NoChatAdapter('stability'),
  images: new StabilityImagesAdapter(),
};
