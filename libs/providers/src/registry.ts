import type { ChatAdapter } from './provider.types';
import { OpenAiChatAdapter } from './openai/openai.chat';

export type ProviderKind = 'openai';

export interface ProviderDefinition {
  /** The source key of catalogue entries and of `provider` pinning; also the env prefix. */
  name: string;
  kind: ProviderKind;
  defaultBaseUrl?: string;
  /** Local servers (Ollama, vLLM) need only a base URL, no key. */
  keyless?: boolean;
}

/** Known upstream providers. Adding an OpenAI-compatible one is one line here. */
export const PROVIDERS: readonly ProviderDefinition[] = [
  { name: 'openai', kind: 'openai', defaultBaseUrl: 'https://api.openai.com/v1' },
  { name: 'openrouter', kind: 'openai', defaultBaseUrl: 'https://openrouter.ai/api/v1' },
  { name: 'groq', kind: 'openai', defaultBaseUrl: 'https://api.groq.com/openai/v1' },
  { name: 'together', kind: 'openai', defaultBaseUrl: 'https://api.together.xyz/v1' },
  { name: 'mistral', kind: 'openai', defaultBaseUrl: 'https://api.mistral.ai/v1' },
  { name: 'deepseek', kind: 'openai', defaultBaseUrl: 'https://api.deepseek.com/v1' },
  { name: 'xai', kind: 'openai', defaultBaseUrl: 'https://api.x.ai/v1' },
  { name: 'vllm', kind: 'openai', keyless: true },
  { name: 'ollama', kind: 'openai', defaultBaseUrl: 'http://127.0.0.1:11434/v1', keyless: true },
];

const CHAT_ADAPTERS: Record<ProviderKind, ChatAdapter> = {
  openai: new OpenAiChatAdapter(),
};

export function findProvider(name: string): ProviderDefinition | undefined {
  const key = name.toLowerCase();
  return PROVIDERS.find((provider) => provider.name === key);
}

export function chatAdapterFor(kind: ProviderKind): ChatAdapter {
  return CHAT_ADAPTERS[kind];
}

/** The environment variable names of a provider, e.g. OPENAI_API_KEY. */
export function providerVariables(name: string): { apiKey: string; baseUrl: string } {
  const prefix = name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  return { apiKey: `${prefix}_API_KEY`, baseUrl: `${prefix}_BASE_URL` };
}
