// Google Vertex AI wire format: the routes of `{location}-aiplatform.googleapis.com/v1/projects/
// {project}/locations/{location}/...`, each accepting only a bearer token the emulator's own token
// endpoint (tokens.ts, `POST /token`) issued and not yet expired (401 in Google's error shape
// otherwise). They answer with the emulator's other formats, scripts included:
//   publishers/google/models/{m}:generateContent | :streamGenerateContent?alt=sse   (../gemini)
//   publishers/google/models/{m}:predict   text embeddings: instances[{content, task_type}],
//       parameters.outputDimensionality; predictions[].embeddings.{values, statistics.token_count}
//   publishers/anthropic/models/{m}:rawPredict | :streamRawPredict   (../anthropic) the Messages
//       body without `model`, with `anthropic_version: "vertex-2023-10-16"`; errors in Anthropic's shape
//   endpoints/openapi/chat/completions   (../openai) partner models, OpenAI's shape
import type { IncomingMessage } from 'node:http';
import { anthropicFormat } from '../anthropic';
import { createMessage } from '../anthropic/messages';
import { RequestContext } from '../context';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import { geminiFormat } from '../gemini';
import { generateContent, streamGenerateContent } from '../gemini/generate';
import { openAIFormat } from '../openai';
import { chatCompletions } from '../openai/chat';
import { embeddingDimensions, embeddingVector } from '../openai/embeddings';
import { countWords, isRecord, optionalPositiveInt } from '../util';
import { VertexTokens } from './tokens';

export { VertexTokens, type ServiceAccountKey, type VertexEmulatorOptions } from './tokens';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const LOCATION = String.raw`^\/v1\/projects\/([^/]+)\/locations\/([^/]+)`;
const MAX_INSTANCES = 250;
const MAX_DIMENSIONS = 3072;

/** The Vertex AI format of one emulator, whose token endpoint issues the tokens its routes accept. */
export function vertexFormat(tokens: VertexTokens): WireFormat {
  /** Runs the route only for a live token of this emulator. */
  const authorized =
    (handle: (ctx: RequestContext) => void | Promise<void>) =>
    (ctx: RequestContext): void | Promise<void> => {
      const verdict = tokens.accepts(bearerOf(ctx.req));
      if (verdict === 'ok') return handle(ctx);
      ctx.json(401, googleError(401, verdict === 'missing'
        ? 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.'
        : `Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.${verdict === 'expired' ? ' The access token has expired.' : ''}`));
    };

  return {
    name: 'vertex',
    routes: [
      { method: 'POST', path: '/token', public: true, handle: (ctx) => issueToken(ctx, tokens) },
      { method: 'POST', path: new RegExp(`${LOCATION}\\/publishers\\/google\\/models\\/([^/:]+):generateContent$`), public: true, handle: authorized((ctx) => generateContent(familyContext(ctx, geminiFormat, ctx.body, ctx.params[2]))) },
      { method: 'POST', path: new RegExp(`${LOCATION}\\/publishers\\/google\\/models\\/([^/:]+):streamGenerateContent$`), public: true, handle: authorized((ctx) => streamGenerateContent(familyContext(ctx, geminiFormat, ctx.body, ctx.params[2]))) },
      { method: 'POST', path: new RegExp(`${LOCATION}\\/publishers\\/google\\/models\\/([^/:]+):predict$`), public: true, handle: authorized(predictEmbeddings) },
      { method: 'POST', path: new RegExp(`${LOCATION}\\/publishers\\/anthropic\\/models\\/([^/:]+):rawPredict$`), public: true, handle: authorized((ctx) => rawPredict(ctx, false)) },
      { method: 'POST', path: new RegExp(`${LOCATION}\\/publishers\\/anthropic\\/models\\/([^/:]+):streamRawPredict$`), public: true, handle: authorized((ctx) => rawPredict(ctx, true)) },
      { method: 'POST', path: new RegExp(`${LOCATION}\\/endpoints\\/openapi\\/chat\\/completions$`), public: true, handle: authorized((ctx) => chatCompletions(familyContext(ctx, openAIFormat, ctx.body))) },
    ],
    ownsPath: (path: string) => path === '/token' || path.startsWith('/v1/projects/'),
    apiKeyOf: bearerOf,
    errorBody: (status: number, message: string) => googleError(status, message),
    describeFailure: (failure: RouterFailure): ErrorResponse => geminiFormat.describeFailure(failure),
  };
}

function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null;
  return match?.[1];
}

function googleError(status: number, message: string): unknown {
  return geminiFormat.errorBody(status, message);
}

function issueToken(ctx: RequestContext, tokens: VertexTokens): void {
  const form = isRecord(ctx.body) ? ctx.body : {};
  const answer = tokens.exchange(form, `http://${ctx.req.headers.host ?? ''}/token`);
  if ('status' in answer) ctx.json(answer.status, answer.body);
  else ctx.json(200, answer);
}

/**
 * The request as another format's handler reads it: that format's error shape, the body it
 * expects and the model in its params. Controls, scripts and aborts are the response's, so shared.
 */
function familyContext(ctx: RequestContext, format: WireFormat, body: unknown, model?: string): RequestContext {
  const family = new RequestContext(ctx.req, ctx.res, format, ctx.path, body, ctx.chunkDelayMs, ctx.requestId);
  family.params = model === undefined ? [] : [model];
  family.query = ctx.query;
  if (ctx.rawBody !== undefined) family.rawBody = ctx.rawBody;
  return family;
}

function decoded(segment: string | undefined): string {
  try {
    return decodeURIComponent(segment ?? '');
  } catch {
    return segment ?? '';
  }
}

/** Claude on Vertex AI: the Messages API with the model in the path and the API version in the body. */
async function rawPredict(ctx: RequestContext, stream: boolean): Promise<void> {
  const model = decoded(ctx.params[2]);
  const anthropic = familyContext(ctx, anthropicFormat, ctx.body);
  if (!isRecord(ctx.body)) return anthropic.error(400, 'The request body must be a JSON object.');
  const { anthropic_version: version, ...body } = ctx.body;
  if (version !== VERTEX_ANTHROPIC_VERSION) return anthropic.error(400, `anthropic_version: expected "${VERTEX_ANTHROPIC_VERSION}" (Vertex AI takes the version in the body), got ${JSON.stringify(version ?? null)}.`);
  if (body.model !== undefined) return anthropic.error(400, 'model: Extra inputs are not permitted (Vertex AI names the model in the URL).');
  if ((body.stream === true) !== stream) return anthropic.error(400, stream ? 'streamRawPredict takes "stream": true.' : 'rawPredict answers whole: "stream": true needs streamRawPredict.');
  await createMessage(familyContext(ctx, anthropicFormat, { ...body, model }));
}

/** Text embeddings through predict: one prediction per instance, its token count the words of its content. */
function predictEmbeddings(ctx: RequestContext): void {
  const model = decoded(ctx.params[2]);
  const body = ctx.body;
  if (!isRecord(body) || !Array.isArray(body.instances) || body.instances.length === 0) return ctx.error(400, 'instances: at least one instance is required.');
  if (body.instances.length > MAX_INSTANCES) return ctx.error(400, `instances: at most ${MAX_INSTANCES} instances in one request.`);
  const parameters = isRecord(body.parameters) ? body.parameters : {};
  const dimensions = optionalPositiveInt(parameters.outputDimensionality);
  if (Number.isNaN(dimensions) || (dimensions ?? 0) > MAX_DIMENSIONS) return ctx.error(400, `parameters.outputDimensionality: expected an integer from 1 to ${MAX_DIMENSIONS}.`);
  const predictions = [];
  for (const [i, instance] of (body.instances as unknown[]).entries()) {
    if (!isRecord(instance) || typeof instance.content !== 'string' || instance.content.trim() === '') return ctx.error(400, `instances[${i}].content: a non-empty text is required.`);
    const values = Array.from(embeddingVector(instance.content, embeddingDimensions(model, dimensions)));
    predictions.push({ embeddings: { values, statistics: { token_count: countWords(instance.content), truncated: false } } });
  }
  ctx.json(200, { predictions, metadata: { billableCharacterCount: (body.instances as Array<{ content: string }>).reduce((sum, instance) => sum + instance.content.length, 0) } });
}
