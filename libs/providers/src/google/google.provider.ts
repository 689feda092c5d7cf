import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { GEMINI_DEFAULT_BASE_URL, GeminiChatAdapter } from './gemini.chat';
import { GeminiEmbeddingsAdapter } from './gemini.embeddings';

/** Google's Gemini API (generateContent). */
export const GOOGLE_KIND: ProviderKindDefinition = {
  kind: 'google',
  wireApi: () => 'gemini',
  providers: [
    builtInProvider('google', 'google', { variables: { apiKey: 'GEMINI_API_KEY', baseUrl: 'GEMINI_BASE_URL' }, defaultBaseUrl: GEMINI_DEFAULT_BASE_URL, emulatorPath: '/v1beta' }),
  ],
  chat: new GeminiChatAdapter(),
  embeddings: new GeminiEmbeddingsAdapter(),
};
