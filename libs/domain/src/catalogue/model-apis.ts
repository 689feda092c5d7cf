import type { QueryableModel } from './catalogue-query';

/**
 * The APIs a catalogue entry can be called through, as `GET /v1/models` lists them in `apis`:
 * each named after its path without `/v1`, slashes as dots (`/v1/chat/completions` is
 * `chat.completions`, `/stt` is `stt`). A chat model answers the Chat Completions, Responses and
 * Messages fronts and Google's generateContent (all four run the chat pipeline); an embeddings
 * model answers embeddings and Google's embedContent; every other kind answers its own endpoint.
 */
export const CHAT_APIS = ['chat.completions', 'responses', 'messages', 'generateContent'] as const;

export type ModelApi = (typeof CHAT_APIS)[number] | 'embeddings' | 'embedContent' | 'images.generations' | 'stt' | 'tts' | 'decisions';

const APIS_OF_KIND: Readonly<Record<string, readonly ModelApi[]>> = {
  'chat-completions': CHAT_APIS,
  embeddings: ['embeddings', 'embedContent'],
  'image-generations': ['images.generations'],
  'speech-to-text': ['stt'],
  'text-to-speech': ['tts'],
  decisions: ['decisions'],
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

/** The APIs that serve this entry, in the order of APIS_OF_KIND's lists, decisions last. */
export function modelApis(model: Pick<QueryableModel, 'type' | 'capabilities' | 'tags'>): readonly ModelApi[] {
  const own = APIS_OF_KIND[endpointKind(model.type)] ?? [];
  return answersDecisions(model) && !own.includes('decisions') ? [...own, 'decisions'] : own;
}
