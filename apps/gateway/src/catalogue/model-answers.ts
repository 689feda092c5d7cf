import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel } from '@igw/contracts';
import { endpointKind, modelApis, type ModelApi } from '@igw/domain';
import { GatewayException } from '@igw/http';

/** What each API takes, as its 400 names it. */
const MODEL_OF_API: Record<ModelApi, string> = {
  'chat.completions': 'a chat model',
  responses: 'a chat model',
  messages: 'a chat model',
  generateContent: 'a chat model',
  embeddings: 'an embeddings model',
  embedContent: 'an embeddings model',
  'images.generations': 'an image generation model',
  stt: 'a speech-to-text model',
  tts: 'a text-to-speech model',
  decisions: 'a decision model',
  moderations: 'a moderation model',
  completions: 'a chat model with a source that serves legacy completions',
};

/**
 * A model sent to an API it does not answer (a chat model to /v1/embeddings) is the client's
 * mistake: 400 naming the model and its type. Which API answers which model is the catalogue's
 * one rule, modelApis, the same that lists `apis` in GET /v1/models.
 */
export function assertModelAnswers(model: CatalogueModel, api: ModelApi): void {
  if (modelApis(model).includes(api)) return;
  if (api === 'completions' && endpointKind(model.type) === 'chat-completions') {
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} model: '${model.id}' is not served by POST /v1/completions: none of its sources serves the legacy completions API. Send it to POST /v1/chat/completions (or /v1/responses) with the prompt as a user message.`,
    );
  }
  const article = /^[aeiou]/i.test(model.type) ? 'an' : 'a';
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} model: '${model.id}' is ${article} ${model.type} model, not ${MODEL_OF_API[api]}.`);
}
