// OpenAI REST wire format (also what every "OpenAI-compatible" server speaks):
// routes under /v1, `Authorization: Bearer <key>`, errors as
// `{error: {message, type, param, code}}`.
import type { IncomingMessage } from 'node:http';
import type { ErrorDetails, ErrorResponse, RouterFailure, WireFormat } from '../format';
import { chatCompletions } from './chat';
import { completions } from './completions';
import { createResponse } from './responses';
import { openAiDecisions, systemOne } from './decisions';
import { embeddings } from './embeddings';
import { imageEdits, imageGenerations } from './images';
import { listModels, retrieveModel } from './models';
import { moderations } from './moderations';
import { audioSpeech } from './speech';
import { audioTranscriptions, audioTranslations } from './transcriptions';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIErrorType(status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export const openAIFormat: WireFormat = {
  name: 'openai',

  routes: [
    { method: 'POST', path: '/v1/chat/completions', handle: chatCompletions },
    { method: 'POST', path: '/v1/completions', handle: completions },
    { method: 'POST', path: '/v1/responses', handle: createResponse },
    { method: 'POST', path: '/v1/embeddings', handle: embeddings },
    { method: 'POST', path: '/v1/moderations', handle: moderations },
    { method: 'POST', path: '/v1/systemone', handle: systemOne },
    { method: 'POST', path: '/v1/decisions', handle: openAiDecisions },
    { method: 'POST', path: '/v1/images/generations', handle: imageGenerations },
    { method: 'POST', path: '/v1/audio/transcriptions', handle: audioTranscriptions },
    { method: 'POST', path: '/v1/audio/translations', handle: audioTranslations },
    { method: 'POST', path: '/v1/images/edits', handle: imageEdits },
    { method: 'POST', path: '/v1/audio/speech', handle: audioSpeech },
    { method: 'GET', path: '/v1/models', handle: listModels },
    { method: 'GET', path: /^\/v1\/models\/(.+)$/, handle: retrieveModel },
  ],

  // The default format: it answers every path no other format claims.
  ownsPath: () => true,

  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers.authorization;
    if (header === undefined || !/^bearer /i.test(header)) return undefined;
    return header.slice(7).trim();
  },

  errorBody(status: number, message: string, details?: ErrorDetails): OpenAIErrorBody {
    return {
      error: { message, type: openAIErrorType(status), param: details?.param ?? null, code: details?.code ?? null },
    };
  },

  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: `Invalid URL (${failure.method} ${failure.path})` };
      case 'invalid_json':
        return {
          status: 400,
          message:
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
        };
      case 'body_too_large':
        return { status: 413, message: `Request body too large (limit ${failure.limitBytes} bytes).` };
      case 'missing_api_key':
        return {
          status: 401,
          message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        };
      case 'invalid_api_key':
        return { status: 401, message: 'Incorrect API key provided.', details: { code: 'invalid_api_key' } };
      case 'emulated':
        return {
          status: failure.status,
          message: `Emulated error: HTTP ${failure.status} requested by ${
            failure.source === 'model' ? 'the model name (@status=)' : 'x-emulator-status'
          }.`,
          details: { code: failure.status === 429 ? 'rate_limit_exceeded' : null },
        };
      case 'internal':
        return { status: 500, message: 'The emulator failed to process the request.' };
    }
  },
};
