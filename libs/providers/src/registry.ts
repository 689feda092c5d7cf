import type { CallOptions, ChatAdapter, EmbeddingsAdapter, ImagesAdapter, ProviderTarget, SpeechAdapter, TranscriptionAdapter } from './provider.types';
import { AnthropicChatAdapter } from './anthropic/anthropic.chat';
import { AzureOpenAiChatAdapter } from './azure/azure-openai.chat';
import { AzureOpenAiEmbeddingsAdapter } from './azure/azure-openai.embeddings';
import { AzureOpenAiImagesAdapter, AzureOpenAiSpeechAdapter, AzureOpenAiTranscriptionAdapter } from './azure/azure-openai.media';
import { GEMINI_DEFAULT_BASE_URL, GeminiChatAdapter } from './google/gemini.chat';
import { GeminiEmbeddingsAdapter } from './google/gemini.embeddings';
import { OpenAiChatAdapter } from './openai/openai.chat';
import { OpenAiEmbeddingsAdapter } from './openai/openai.embeddings';
import { OpenAiImagesAdapter } from './openai/openai.images';
import { OpenAiModerationsAdapter, type ModerationsAdapter } from './openai/openai.moderations';
import { OpenAiSpeechAdapter } from './openai/openai.speech';
import { OpenAiTranscriptionAdapter } from './openai/openai.transcription';
import { DeepgramSpeechAdapter } from './deepgram/deepgram.speech';
import { DEEPGRAM_DEFAULT_BASE_URL, DeepgramTranscriptionAdapter } from './deepgram/deepgram.transcription';
import { STABILITY_DEFAULT_BASE_URL, StabilityImagesAdapter } from './stability/stability.images';
import { UpstreamUnavailableError } from './upstream.errors';
import { BedrockChatAdapter } from './bedrock/bedrock.chat';
import { VertexChatAdapter } from './vertex/vertex.chat';
import { VertexEmbeddingsAdapter } from './vertex/vertex.embeddings';

/**
 * Wire formats; each has one adapter folder. `deepgram` (speech) and `stability` (images) serve
 * media endpoints only; `bedrock` and `vertex` are cloud platforms serving several families
 * (wire-api.ts says which API each model is called through).
 */
export type ProviderKind = 'openai' | 'azure-openai' | 'anthropic' | 'google' | 'deepgram' | 'stability' | 'bedrock' | 'vertex';

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
  provider('deepgram', 'deepgram', { defaultBaseUrl: DEEPGRAM_DEFAULT_BASE_URL, emulatorPath: '' }),
  provider('stability', 'stability', { defaultBaseUrl: STABILITY_DEFAULT_BASE_URL, emulatorPath: '' }),
  // Configured by a region (BEDROCK_REGION) or location (VERTEX_LOCATION): their credentials come
  // from the cloud's own chain (a pod's role). Bedrock may take an API key instead; Vertex AI's
  // credential is Application Default Credentials' file (GOOGLE_APPLICATION_CREDENTIALS, read by
  // google-auth-library itself) or the metadata server, never a key.
  provider('bedrock', 'bedrock', { variables: { apiKey: 'AWS_BEARER_TOKEN_BEDROCK', baseUrl: 'BEDROCK_BASE_URL' }, keyless: true, emulatorPath: '' }),
  provider('vertex', 'vertex', { variables: { apiKey: 'GOOGLE_APPLICATION_CREDENTIALS', baseUrl: 'VERTEX_BASE_URL' }, keyless: true, emulatorPath: '' }),
];

/**
 * The chat adapter of a kind with no chat API. A catalogue source should never send chat there;
 * if one does, the attempt fails like an unreachable source, so the fallback chain moves on.
 */
class NoChatAdapter implements ChatAdapter {
  constructor(private readonly kind: ProviderKind) {}

  async chat(target: ProviderTarget, _request: unknown, _options: CallOptions): Promise<never> {
    throw new UpstreamUnavailableError(target.provider, `a ${this.kind} provider has no chat completions API`);
  }

  async stream(target: ProviderTarget, _request: unknown, _options: CallOptions): Promise<never> {
    throw new UpstreamUnavailableError(target.provider, `a ${this.kind} provider has no chat completions API`);
  }
}

const CHAT_ADAPTERS: Record<ProviderKind, ChatAdapter> = {
  openai: new OpenAiChatAdapter(),
  'azure-openai': new AzureOpenAiChatAdapter(),
  anthropic: new AnthropicChatAdapter(),
  google: new GeminiChatAdapter(),
  deepgram: new NoChatAdapter('deepgram'),
  stability: new NoChatAdapter('stability'),
  bedrock: new BedrockChatAdapter(),
  vertex: new VertexChatAdapter(),
};

/** Kinds with an embeddings API; Anthropic has none. */
const EMBEDDINGS_ADAPTERS: Partial<Record<ProviderKind, EmbeddingsAdapter>> = {
  openai: new OpenAiEmbeddingsAdapter(),
  'azure-openai': new AzureOpenAiEmbeddingsAdapter(),
  google: new GeminiEmbeddingsAdapter(),
  vertex: new VertexEmbeddingsAdapter(),
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

/** Kinds with an image generation API. */
const IMAGES_ADAPTERS: Partial<Record<ProviderKind, ImagesAdapter>> = {
  openai: new OpenAiImagesAdapter(),
  'azure-openai': new AzureOpenAiImagesAdapter(),
  stability: new StabilityImagesAdapter(),
};

/** Kinds with a speech-to-text API for pre-recorded audio. */
const TRANSCRIPTION_ADAPTERS: Partial<Record<ProviderKind, TranscriptionAdapter>> = {
  openai: new OpenAiTranscriptionAdapter(),
  'azure-openai': new AzureOpenAiTranscriptionAdapter(),
  deepgram: new DeepgramTranscriptionAdapter(),
};

/** Kinds with a text-to-speech API. */
const SPEECH_ADAPTERS: Partial<Record<ProviderKind, SpeechAdapter>> = {
  openai: new OpenAiSpeechAdapter(),
  'azure-openai': new AzureOpenAiSpeechAdapter(),
  deepgram: new DeepgramSpeechAdapter(),
};

/** The image generation adapter of a provider kind; undefined for a kind with none. */
export function imagesAdapterFor(kind: ProviderKind): ImagesAdapter | undefined {
  return IMAGES_ADAPTERS[kind];
}

/** The speech-to-text adapter of a provider kind; undefined for a kind with none. */
export function transcriptionAdapterFor(kind: ProviderKind): TranscriptionAdapter | undefined {
  return TRANSCRIPTION_ADAPTERS[kind];
}

/** The text-to-speech adapter of a provider kind; undefined for a kind with none. */
export function speechAdapterFor(kind: ProviderKind): SpeechAdapter | undefined {
  return SPEECH_ADAPTERS[kind];
}

/** Kinds with OpenAI's moderation API (Azure OpenAI has none; its content filters are part of each call). */
const MODERATIONS_ADAPTERS: Partial<Record<ProviderKind, ModerationsAdapter>> = {
  openai: new OpenAiModerationsAdapter(),
};

/** The moderation adapter of a provider kind; undefined for a kind with none. */
export function moderationsAdapterFor(kind: ProviderKind): ModerationsAdapter | undefined {
  return MODERATIONS_ADAPTERS[kind];
}
