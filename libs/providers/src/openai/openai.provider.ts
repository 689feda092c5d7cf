import { builtInProvider, type ProviderKindDefinition } from '../provider-definition';
import { OpenAiChatAdapter } from './openai.chat';
import { OpenAiEmbeddingsAdapter } from './openai.embeddings';
import { OpenAiImagesAdapter } from './openai.images';
import { OpenAiModerationsAdapter } from './openai.moderations';
import { OpenAiSpeechAdapter } from './openai.speech';
import { OpenAiTranscriptionAdapter } from './openai.transcription';

/** OpenAI's API, and every server speaking it: adding an OpenAI-compatible provider is one line of `providers`. */
export const OPENAI_KIND: ProviderKindDefinition = {
  kind: 'openai',
  wireApi: () => 'openai',
  providers: [
    builtInProvider('openai', 'openai', { defaultBaseUrl: 'https://api.openai.com/v1' }),
    builtInProvider('openrouter', 'openai', { defaultBaseUrl: 'https://openrouter.ai/api/v1' }),
    builtInProvider('groq', 'openai', { defaultBaseUrl: 'https://api.groq.com/openai/v1' }),
    builtInProvider('together', 'openai', { defaultBaseUrl: 'https://api.together.xyz/v1' }),
    builtInProvider('mistral', 'openai', { defaultBaseUrl: 'https://api.mistral.ai/v1' }),
    builtInProvider('deepseek', 'openai', { defaultBaseUrl: 'https://api.deepseek.com/v1' }),
    builtInProvider('xai', 'openai', { defaultBaseUrl: 'https://api.x.ai/v1' }),
    builtInProvider('vllm', 'openai', { keyless: true }),
    builtInProvider('ollama', 'openai', { defaultBaseUrl: 'http://127.0.0.1:11434/v1', keyless: true }),
    // TypeSafe's System One decision API (POST {TYPESAFE_BASE_URL}/systemone); no default address.
    builtInProvider('typesafe', 'openai'),
  ],
  chat: new OpenAiChatAdapter(),
  embeddings: new OpenAiEmbeddingsAdapter(),
  images: new OpenAiImagesAdapter(),
  transcription: new OpenAiTranscriptionAdapter(),
  speech: new OpenAiSpeechAdapter(),
  moderations: new OpenAiModerationsAdapter(),
};
