import type { ChatAdapter, EmbeddingsAdapter, ImagesAdapter, SpeechAdapter, TranscriptionAdapter } from './provider.types';
import type { ModerationsAdapter } from './openai/openai.moderations';
import type { WireApi } from './wire-api';

/**
 * Wire formats; each has one adapter folder. `deepgram` (speech) and `stability` (images) serve
 * media endpoints only; `bedrock` and `vertex` are cloud platforms serving several families
 * (their definition's `wireApi` says which API each model is called through).
 */
export type ProviderKind = 'openai' | 'azure-openai' | 'anthropic' | 'google' | 'deepgram' | 'stability' | 'bedrock' | 'vertex';

/** A named upstream provider: one of a kind's built-in providers, or one a providers file declares. */
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

/**
 * What one provider folder declares: its wire format, the built-in providers speaking it and
 * its adapter per capability. A capability left out is one the kind's API lacks; chat is always
 * present, as a source of a media-only kind must still fail like an unreachable one.
 */
export interface ProviderKindDefinition {
  kind: ProviderKind;
  /** The API a request for `model` is written in. */
  wireApi(model: string): WireApi;
  providers: readonly ProviderDefinition[];
  chat: ChatAdapter;
  embeddings?: EmbeddingsAdapter;
  images?: ImagesAdapter;
  transcription?: TranscriptionAdapter;
  speech?: SpeechAdapter;
  moderations?: ModerationsAdapter;
}

/** A built-in provider, with the `<NAME>_API_KEY` / `<NAME>_BASE_URL` variables unless told otherwise. */
export function builtInProvider(name: string, kind: ProviderKind, rest: Partial<ProviderDefinition> = {}): ProviderDefinition {
  const prefix = name.toUpperCase();
  return { name, kind, variables: { apiKey: `${prefix}_API_KEY`, baseUrl: `${prefix}_BASE_URL` }, emulatorPath: '/v1', ...rest };
}
