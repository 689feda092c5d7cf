import type { QueryableModel } from './catalogue-query';

/**
 * The APIs a catalogue entry can be called through, as `GET /v1/models` lists them in `apis`:
 * each named after its path without `/v1`, slashes as dots (`/v1/chat/completions` is
 * `chat.completions`, `/stt` is `stt`). A chat model answers the Chat Completions, Responses and
 * Messages fronts and Google's generateContent (all four run the chat pipeline); an embeddings
 * model answers embeddings and Google's embedContent; every other kind answers its own endpoint.
 */
export const CHAT_APIS = ['chat.completions', 'responses', 'messages', 'generateContent'] as const;

export type ModelApi = (typeof CHAT_APIS)[number] | 'embeddings' | 'embedContent' | 'images.generations' | 'stt' | 'tts' | 'decisions' | 'moderations' | 'completions';

const APIS_OF_KIND: Readonly<Record<string, readonly ModelApi[]>> = {
  'chat-completions': CHAT_APIS,
  embeddings: ['embeddings', 'embedContent'],
  'image-generations': ['images.generations'],
  'speech-to-text': ['stt'],
  'text-to-speech': ['tts'],
  decisions: ['decisions'],
  moderations: ['moderations'],
  completions: ['completions'],
};

/** Catalogue tag of a chat model answering decisions through its log probabilities. */
export const LOGPROBS_TAG = 'decisions:logprobs';
/** Catalogue capability of a model that answers `POST /v1/decisions`. */
export const DECISIONS_CAPABILITY = 'decisions';

/** The endpoint kind of a type: the part after its last slash. */
export function endpointKind(type: string): string {
  return type.slice(type.lastIndexOf('/') + 1);
}

/** Decision models, and the chat models the catalogue marks as answering decisions. */
export function answersDecisions(model: Pick<QueryableModel, 'type' | 'capabilities' | 'tags'>): boolean {
  return endpointKind(model.type) === 'decisions' || (model.capabilities ?? []).includes(DECISIONS_CAPABILITY) || model.tags.includes(LOGPROBS_TAG);
}

/** The source's native API (catalogue-model.ts's NATIVE_SOURCE_APIS) that serves OpenAI's legacy `POST /v1/completions`. */
export const COMPLETIONS_NATIVE_API = 'completions';

/** Sources as far as the APIs of an entry depend on them, where the caller has its routing. */
type RoutedSources = { routing?: { sources: ReadonlyArray<{ native?: readonly string[] }> } };

/**
 * Whether a source of the model serves legacy completions: every source of a `completions`
 * model (e.g. gpt-3.5-turbo-instruct, which has no chat API), and the sources of a chat model
 * that the catalogue marks `native: [completions]` (a vLLM server, which has both).
 */
export function sourceServesCompletions(model: Pick<QueryableModel, 'type'>, source: { native?: readonly string[] }): boolean {
  const kind = endpointKind(model.type);
  return kind === 'completions' || (kind === 'chat-completions' && source.native?.includes(COMPLETIONS_NATIVE_API) === true);
}

/** Whether POST /v1/completions serves the model: a source of it serves legacy completions. */
export function answersCompletions(model: Pick<QueryableModel, 'type'> & RoutedSources): boolean {
  return endpointKind(model.type) === 'completions' || (model.routing?.sources ?? []).some((source) => sourceServesCompletions(model, source));
}

/** The APIs that serve this entry, in the order of APIS_OF_KIND's lists, then legacy completions, decisions last. */
export function modelApis(model: Pick<QueryableModel, 'type' | 'capabilities' | 'tags'> & RoutedSources): readonly ModelApi[] {
  let apis = APIS_OF_KIND[endpointKind(model.type)] ?? [];
  if (!apis.includes('completions') && answersCompletions(model)) apis = [...apis, 'completions'];
  return answersDecisions(model) && !apis.includes('decisions') ? [...apis, 'decisions'] : apis;
}
