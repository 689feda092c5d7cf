// Azure OpenAI wire format: OpenAI's chat completions and embeddings addressed by deployment,
//   POST /openai/deployments/{deployment}/chat/completions?api-version=<version>
//   POST /openai/deployments/{deployment}/embeddings?api-version=<version>
//   POST /openai/deployments/{deployment}/images/generations, /audio/transcriptions, /audio/speech
//        (the OpenAI media routes, ../openai/images.ts, transcriptions.ts, speech.ts)
// with the key in the `api-key` header and errors as `{error: {code, message}}` (plus
// `param` when one is known). A missing `api-version` is a 400 (real Azure answers 404
// "Resource not found"; a 400 names the problem). Replies, streaming, usage and the
// token rule are exactly the OpenAI routes' (../openai/chat.ts, ../openai/embeddings.ts: the
// vector length follows the deployment name); the `model` in answers is the deployment name
// (URL-decoded, so it may contain slashes).
import type { IncomingMessage } from 'node:http';
import { RequestContext } from '../context';
import type { ErrorDetails, ErrorResponse, RouterFailure, WireFormat } from '../format';
import { createResponse } from '../openai/responses';
import { chatCompletions } from '../openai/chat';
import { embeddings } from '../openai/embeddings';
import { imageGenerations } from '../openai/images';
import { audioSpeech } from '../openai/speech';
import { audioTranscriptions } from '../openai/transcriptions';
import { isRecord } from '../util';

export interface AzureErrorBody {
  error: { code: string; message: string; param?: string };
}

export const MISSING_API_VERSION = {
  code: 'MissingApiVersionParameter',
  message: 'The api-version query parameter (?api-version=) is required for all requests.',
} as const;

/** Runs an OpenAI route with the deployment as the body's `model`, once api-version is checked. */
function byDeployment(handler: (ctx: RequestContext) => void | Promise<void>): (ctx: RequestContext) => Promise<void> {
  return (ctx) => deploymentRoute(ctx, handler);
}

async function deploymentRoute(ctx: RequestContext, handler: (ctx: RequestContext) => void | Promise<void>): Promise<void> {
  const url = ctx.req.url ?? '';
  const query = url.indexOf('?');
  const apiVersion = query === -1 ? null : new URLSearchParams(url.slice(query + 1)).get('api-version');
  if (apiVersion === null || apiVersion === '') {
    ctx.error(400, MISSING_API_VERSION.message, { code: MISSING_API_VERSION.code });
    return;
  }
  let deployment: string;
  try {
    deployment = decodeURIComponent(ctx.params[0] ?? '');
  } catch {
    deployment = ctx.params[0] ?? '';
  }
  // The deployment decides the model: the OpenAI handler runs on the body with it as `model`.
  const body = isRecord(ctx.body) ? { ...ctx.body, model: deployment } : ctx.body;
  const deploymentCtx = new RequestContext(ctx.req, ctx.res, ctx.format, ctx.path, body, ctx.chunkDelayMs, ctx.requestId);
  deploymentCtx.params = ctx.params;
  deploymentCtx.query = ctx.query;
  deploymentCtx.rawBody = ctx.rawBody;
  deploymentCtx.files = ctx.files;
  await handler(deploymentCtx);
}

export const azureFormat: WireFormat = {
  name: 'azure-openai',

  routes: [
    { method: 'POST', path: /^\/openai\/deployments\/(.+)\/chat\/completions$/, handle: byDeployment(chatCompletions) },
    // The v1 API: the deployment is the body's `model`, no api-version.
    { method: 'POST', path: '/openai/v1/responses', handle: createResponse },
    { method: 'POST', path: /^\/openai\/deployments\/(.+)\/embeddings$/, handle: byDeployment(embeddings) },
    { method: 'POST', path: /^\/openai\/deployments\/(.+)\/images\/generations$/, handle: byDeployment(imageGenerations) },
    { method: 'POST', path: /^\/openai\/deployments\/(.+)\/audio\/transcriptions$/, handle: byDeployment(audioTranscriptions) },
    { method: 'POST', path: /^\/openai\/deployments\/(.+)\/audio\/speech$/, handle: byDeployment(audioSpeech) },
  ],

  ownsPath: (path: string) => path.startsWith('/openai/'),

  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers['api-key'];
    return typeof header === 'string' && header !== '' ? header.trim() : undefined;
  },

  errorBody(status: number, message: string, details?: ErrorDetails): AzureErrorBody {
    const error: AzureErrorBody['error'] = { code: details?.code ?? String(status), message };
    if (details?.param) error.param = details.param;
    return { error };
  },

  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: 'Resource not found' };
      case 'invalid_json':
        return { status: 400, message: 'The request body is not valid JSON.', details: { code: 'BadRequest' } };
      case 'body_too_large':
        return { status: 413, message: `Request body too large (limit ${failure.limitBytes} bytes).` };
      case 'missing_api_key':
        return {
          status: 401,
          message: 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.',
        };
      case 'invalid_api_key':
        return {
          status: 401,
          message:
            'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        };
      case 'emulated':
        return {
          status: failure.status,
          message: `Emulated error: HTTP ${failure.status} requested by ${failure.source === 'model' ? 'the model name (@status=)' : 'x-emulator-status'}.`,
        };
      case 'internal':
        return { status: 500, message: 'The emulator failed to process the request.', details: { code: 'InternalServerError' } };
    }
  },
};
