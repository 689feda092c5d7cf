import type { ChatAdapter, EmbeddingsAdapter } from './provider.types';
import { AnthropicChatAdapter } from './anthropic/anthropic.chat';
import { AzureOpenAiChatAdapter } from './azure/azure-openai.chat';
import { AzureOpenAiEmbeddingsAdapter } from './azure/azure-openai.embeddings';
import { GEMINI_DEFAULT_BASE_URL, GeminiChatAdapter } from './google/gemini.chat';
import { GeminiEmbeddingsAdapter } from './google/gemini.embeddings';
import { OpenAiChatAdapter } from './openai/openai.chat';
import { OpenAiEmbeddingsAdapter } from './openai/openai.embeddings';

/** Wire formats; each has one adapter folder. */
export type ProviderKind = 'openai' | 'azure-openai' | 'anthropic' | 'google';

export interface ProviderDefinition {
  /** The source key of catalogue entries and of `provider` pinning. */
  name: string;
  kind: ProviderKind;
  /** Environment variables holding its key and address (default `<NAME>_API_KEY` / `<NAME>_BASE_URL`). */
  variables: { apiKey: string; baseUrl: string };
  defaultBaseUrl?: string;
  /** Local servers (Ollama, vLLM) need only an address, no key. */
  keyless?: boolean;
  /** Where the repository's emulator serves this format, for `--demo` and tests. */
  emulatorPath: string;
}

function provider(name: string, kind: ProviderKind, rest: Partial<ProviderDefinition> = {}): ProviderDefinition {
  const prefix = name.toUpperCase();
  return { name, kind, variables: { apiKey: `${prefix}_API_KEY`, baseUrl: `${prefix}_BASE_URL` }, emulatorPath: '/v1', ...rest };
}

/** Known upstream providers. Adding an OpenAI-compatible one is one line here. */
export const PROVIDERS: readonly ProviderDefinition[] = [
  provider('openai', 'openai', { defaultBaseUrl: 'https://api.openai.com/v1' }),
  provider('azure', 'azure-openai', { variables: { apiKey: 'AZURE_OPENAI_API_KEY', baseUrl: 'AZURE_OPENAI_ENDPOINT' }, emulatorPath: '' }),
  provider('anthropic', 'anthropic', { defaultBaseUrl: 'https://api.anthropic.com', emulatorPath: '' }),
  provider('google', 'google', {
    variables: { apiKey: 'GEMINI_API_KEY', baseUrl: 'GEMINI_BASE_URL' },
    defaultBaseUrl: GEMINI_DEFAULT_BASE_URL,
    emulatorPath: '/v1beta',
  }),
  provider('openrouter', 'openai', { defaultBaseUrl: 'https://openrouter.ai/api/v1' }),
  provider('groq', 'openai', { defaultBaseUrl: 'https://api.groq.com/openai/v1' }),
  provider('together', 'openai', { defaultBaseUrl: 'https://api.together.xyz/v1' }),
  provider('mistral', 'openai', { defaultBaseUrl: 'https://api.mistral.ai/v1' }),
  provider('deepseek', 'openai', { defaultBaseUrl: 'https://api.deepseek.com/v1' }),
  provider('xai', 'openai', { defaultBaseUrl: 'https://api.x.ai/v1' }),
  provider('vllm', 'openai', { keyless: true }),
  provider('ollama', 'openai', { defaultBaseUrl: 'http://127.0.0.1:11434/v1', keyless: true }),
  // TypeSafe's System One decision API (POST {TYPESAFE_BASE_URL}/systemone); no default address.
  provider('typesafe', 'openai'),
];

const CHAT_ADAPTERS: Record<ProviderKind, ChatAdapter> = {
  openai: new OpenAiChatAdapter(),
  'azure-openai': new AzureOpenAiChatAdapter(),
  anthropic: new AnthropicChatAdapter(),
  google: new GeminiChatAdapter(),
};

/** Kinds with an embeddings API; Anthropic has none. */
const EMBEDDINGS_ADAPTERS: Partial<Record<ProviderKind, EmbeddingsAdapter>> = {
  openai: new OpenAiEmbeddingsAdapter(),
  'azure-openai': new AzureOpenAiEmbeddingsAdapter(),
  google: new GeminiEmbeddingsAdapter(),
};

export function findProvider(name: string): ProviderDefinition | undefined {
  const key = name.toLowerCase();
  return PROVIDERS.find((definition) => definition.name === key);
}

export function chatAdapterFor(kind: ProviderKind): ChatAdapter {
  return CHAT_ADAPTERS[kind];
}

/** The embeddings adapter of a provider kind; undefined for a kind with no embeddings API. */
export function embeddingsAdapterFor(kind: ProviderKind): EmbeddingsAdapter | undefined {
  return EMBEDDINGS_ADAPTERS[kind];
}
