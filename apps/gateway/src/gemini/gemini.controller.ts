import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  ErrorMessages,
  GeminiBatchEmbedContentsRequestDto,
  GeminiCountTokensRequestDto,
  GeminiEmbedContentRequestDto,
  GeminiGenerateContentRequestDto,
  type EmbeddingListDto,
  type EmbeddingRequestDto,
  type GeminiRequestContent,
} from '@igw/contracts';
import { API_KEY_ERRORS, GatewayException, MODEL_ENDPOINT_ERRORS, PathId, RequireApiKey, sendJson, type ErrorResponses, type DirectRequest, DirectRoute } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { respondToChat } from '../chat/chat-responder';
import { ChatService } from '../chat/chat.service';
import { EmbeddingsService } from '../embeddings/embeddings.service';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { countPromptTokens } from '../tokens/prompt-token-count';
import { GeminiErrorFilter, GeminiErrorResponses } from './gemini-errors';
import { geminiModelOf, geminiModelPage, generationMethodsOf } from './gemini-models';
import { geminiFrontOf } from './gemini-native';
import { nullsAsAbsent, promptOf } from './gemini-request';

/**
 * Both versions' paths of a `:method` route: `/v1beta/models/{model}:method`, and the model as
 * the whole path (`/v1beta/google/gemini-2.5-flash:generateContent`, what `@ai-sdk/google` sends
 * for an id with a slash); the same under `/v1`, where the colon keeps them apart from OpenAI's
 * `GET /v1/models/{id}`.
 */
const paths = (method: string) => [`v1beta/*model\\:${method}`, `v1/*model\\:${method}`];
const KEY = { credits: true, googApiKeyHeader: true } as const;

const HELLO = [{ role: 'user', parts: [{ text: 'Say hello in five words.' }] }];
const WEATHER_TOOL = {
  functionDeclarations: [{ name: 'get_weather', description: 'The current weather of a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } }],
};

/** The first is Try it out's default: a request that succeeds as it is (on any chat model: the path's model). */
const GENERATE_EXAMPLES = {
  hello: { summary: 'A short answer', value: { contents: HELLO, generationConfig: { maxOutputTokens: 100 } } },
  system: { summary: 'A system instruction and sampling settings', value: { systemInstruction: { parts: [{ text: 'You answer in one sentence.' }] }, contents: HELLO, generationConfig: { temperature: 0.2, maxOutputTokens: 100 } } },
  tools: { summary: 'A function the model may call', value: { contents: [{ role: 'user', parts: [{ text: 'What is the weather in Paris?' }] }], tools: [WEATHER_TOOL], toolConfig: { functionCallingConfig: { mode: 'AUTO' } } } },
  json: {
    summary: 'JSON output that satisfies a schema',
    value: { contents: [{ role: 'user', parts: [{ text: 'Name a city and its country.' }] }], generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' }, country: { type: 'STRING' } }, required: ['city', 'country'] } } },
  },
};

const GENERATE_ANSWER = {
  candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there, nice to meet!' }] }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 13, candidatesTokenCount: 7, totalTokenCount: 20 },
  modelVersion: 'openai/gpt-4o-mini',
  responseId: 'chatcmpl-0f8fad5bd9cb469fa16570867728950e',
  meta: { usage: { credits_used: 12.3, usd_spent: 0.00000615 } },
};

/** The path's model as Google names it, `models/<id>` (its `{model=models/*}`); Try it out sends it percent-encoded, which is read the same. */
const MODEL_PARAM = {
  name: 'model',
  description: 'The model, `models/<catalogue id or alias>` as Google names it, slashes kept (`models/google/gemini-2.5-flash`); the id alone is taken too (`@ai-sdk/google` sends an id with a slash so)',
  example: 'models/gpt-4o-mini',
};
const EMBEDDING_MODEL_PARAM = { ...MODEL_PARAM, example: 'models/text-embedding-3-small' };
const KEY_HEADER = { name: 'x-goog-api-key', required: false, description: 'The API key (or `?key=`, or `Authorization: Bearer`)' };

const GEMINI_401 = { description: API_KEY_ERRORS[401].description, messages: ErrorMessages.invalidApiKeyIn('x-goog-api-key: <API_KEY>', 'or as ?key=<API_KEY>') };
const GENERATE_ERRORS: ErrorResponses = {
  ...API_KEY_ERRORS,
  ...MODEL_ENDPOINT_ERRORS,
  401: GEMINI_401,
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: {
      noContents: `${ErrorMessages.bodyValidationPrefix} contents: Expected a non-empty array of contents. Received nothing`,
      badRole: `${ErrorMessages.bodyValidationPrefix} contents[0].role: Expected one of 'user', 'model'. Received 'assistant'`,
      cachedContent: `${ErrorMessages.bodyValidationPrefix} cachedContent: a cached content of the upstream account cannot be used through this gateway (it is shared by every client): send the contents themselves`,
    },
  },
};
const COUNT_ERRORS: ErrorResponses = { ...GENERATE_ERRORS, 403: { description: 'The account is suspended', messages: ErrorMessages.accountSuspended } };
const EMBED_ERRORS: ErrorResponses = {
  ...API_KEY_ERRORS,
  ...MODEL_ENDPOINT_ERRORS,
  401: GEMINI_401,
  400: { description: 'An invalid body: the message names the first wrong field', messages: `${ErrorMessages.bodyValidationPrefix} content.parts[0]: Expected a text part {text} (embeddings take text only). Received object` },
};

/**
 * The model a `:method` route names: the path between its version (`/v1beta/`, `/v1/`) and its
 * last colon, decoded, slashes kept (`google/gemini-2.5-flash`), a `models/` prefix dropped.
 * Read from the URL (not Express's params) so that the direct route and Express read the same.
 */
export function pathModelOf(request: Pick<IncomingMessage, 'url'>): string {
  const url = request.url ?? '';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const raw = path.slice(path.indexOf('/', 1) + 1, path.lastIndexOf(':'));
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    name = raw;
  }
  return name.replace(/^models\//, '');
}

/** `alt=sse` asks for server-sent events; without it Google streams one JSON array. */
function framingOf(request: Pick<IncomingMessage, 'url'>): 'sse' | 'json-array' {
  const url = request.url ?? '';
  const queryAt = url.indexOf('?');
  return queryAt !== -1 && new URLSearchParams(url.slice(queryAt + 1)).get('alt') === 'sse' ? 'sse' : 'json-array';
}

/** An embedContent's text: its parts' texts (validation takes text parts only), one after another. */
function embeddedText(content: GeminiRequestContent): string {
  return content.parts.map((part) => part.text ?? '').join('\n');
}

/**
 * Google's Generative Language API (what `@google/genai`, `@ai-sdk/google` and the Gemini CLI
 * speak) on every chat and embedding model of the catalogue: generateContent translated to the
 * chat pipeline's request and run by it, as chat completions are (admission, holds, fallback,
 * billing), natively on Google sources; embeddings through the embeddings service; answered in
 * Google's shapes, errors included.
 */
@ApiTags('gemini')
@Controller()
@UseFilters(GeminiErrorFilter)
export class GeminiController {
  constructor(
    private readonly chat: ChatService,
    private readonly pipeline: PaidRequestPipeline,
    private readonly embeddings: EmbeddingsService,
    private readonly catalogue: CatalogueSnapshotService,
  ) {}

  @DirectRoute()
  @Post(paths('generateContent'))
  @HttpCode(200)
  @GeminiErrorResponses(GENERATE_ERRORS)
  @RequireApiKey(KEY)
  @ApiOperation({
    summary: "Generate content, Google's Gemini API (any chat model of the catalogue; natively on Google sources)",
    description:
      'The key as `x-goog-api-key`, `?key=` or `Authorization: Bearer`. Errors come as `{error: {code, message, status}}` with the gateway\'s own error fields beside them. Built-in tools other than googleSearch are left out and named in `x-gateway-dropped-tools`; `cachedContent` is refused.',
  })
  @ApiParam(MODEL_PARAM)
  @ApiHeader(KEY_HEADER)
  @ApiBody({ type: GeminiGenerateContentRequestDto, examples: GENERATE_EXAMPLES })
  @ApiOkResponse({ example: GENERATE_ANSWER, description: 'The GenerateContentResponse, with the gateway\'s `meta.usage`' })
  async generateContent(@Body() body: GeminiGenerateContentRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    await this.generate(body, request, response, null);
  }

  @DirectRoute()
  @Post(paths('streamGenerateContent'))
  @HttpCode(200)
  @GeminiErrorResponses(GENERATE_ERRORS)
  @RequireApiKey(KEY)
  @ApiOperation({
    summary: 'Generate content as a stream: with `alt=sse` server-sent events `data: {GenerateContentResponse}`, without it one JSON array written element by element',
    description: 'The last response carries the finish reasons, `usageMetadata` and `meta.usage`; a failure half-way is an element `{error: {code, message, status}}`.',
  })
  @ApiParam(MODEL_PARAM)
  @ApiQuery({ name: 'alt', required: false, description: '`sse` for server-sent events', example: 'sse' })
  @ApiHeader(KEY_HEADER)
  @ApiBody({ type: GeminiGenerateContentRequestDto, examples: GENERATE_EXAMPLES })
  @ApiOkResponse({ description: 'text/event-stream (alt=sse) or application/json (a streamed array) of GenerateContentResponse' })
  async streamGenerateContent(@Body() body: GeminiGenerateContentRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    await this.generate(body, request, response, framingOf(request));
  }

  @DirectRoute()
  @Post(paths('countTokens'))
  @HttpCode(200)
  @GeminiErrorResponses(COUNT_ERRORS)
  @RequireApiKey(KEY)
  @ApiOperation({ summary: "Count a request's input tokens with the gateway's tokenizer (not billed; a suspended account is refused)" })
  @ApiParam(MODEL_PARAM)
  @ApiHeader(KEY_HEADER)
  @ApiBody({ type: GeminiCountTokensRequestDto, examples: { hello: { summary: 'A short turn', value: { contents: HELLO } } } })
  @ApiOkResponse({ example: { totalTokens: 14 } })
  async countTokens(@Body() body: GeminiCountTokensRequestDto, @Req() request: DirectRequest): Promise<{ totalTokens: number }> {
    const modelName = pathModelOf(request);
    const { model } = this.pipeline.resolveModel(modelName, 'generateContent');
    nullsAsAbsent(body);
    const prompt = body.generateContentRequest ?? (body.contents !== undefined ? { contents: body.contents } : undefined);
    if (prompt === undefined) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} contents: Expected a non-empty array of contents, or a generateContentRequest. Received nothing`);
    }
    // Not billed, but tokenizer time: counted against the key's rate and requests in flight as a paid request is.
    const slot = await this.pipeline.admitUnpaid({ auth: request.context.auth!, requestId: request.context.requestId });
    try {
      return { totalTokens: await countPromptTokens(promptOf(prompt, modelName, model), { route: 'countTokens', field: 'contents' }) };
    } finally {
      slot.release();
    }
  }

  @DirectRoute()
  @Post(paths('embedContent'))
  @HttpCode(200)
  @GeminiErrorResponses(EMBED_ERRORS)
  @RequireApiKey(KEY)
  @ApiOperation({ summary: 'Embed one text (any embeddings model of the catalogue), billed by input tokens as /v1/embeddings is' })
  @ApiParam(EMBEDDING_MODEL_PARAM)
  @ApiHeader(KEY_HEADER)
  @ApiBody({ type: GeminiEmbedContentRequestDto, examples: { one: { summary: 'One text, a short vector', value: { content: { parts: [{ text: 'The quick brown fox' }] }, outputDimensionality: 8 } } } })
  @ApiOkResponse({ example: { embedding: { values: [0.0123, -0.0456, 0.0789] }, meta: { usage: { credits_used: 0.8, usd_spent: 0.0000004 } } } })
  async embedContent(@Body() body: GeminiEmbedContentRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    const answer = await this.embed(pathModelOf(request), [embeddedText(body.content)], nullsAsAbsent(body).outputDimensionality, request, response);
    sendJson(response, 200, { embedding: { values: answer.data[0].embedding }, meta: answer.meta });
  }

  @DirectRoute()
  @Post(paths('batchEmbedContents'))
  @HttpCode(200)
  @GeminiErrorResponses(EMBED_ERRORS)
  @RequireApiKey(KEY)
  @ApiOperation({ summary: "Embed several texts in one call (one billed request); each request's model, when given, must be the path's" })
  @ApiParam(EMBEDDING_MODEL_PARAM)
  @ApiHeader(KEY_HEADER)
  @ApiBody({
    type: GeminiBatchEmbedContentsRequestDto,
    examples: { two: { summary: 'Two texts', value: { requests: [{ model: 'models/text-embedding-3-small', content: { parts: [{ text: 'Hello' }] } }, { content: { parts: [{ text: 'World' }] } }] } } },
  })
  @ApiOkResponse({ example: { embeddings: [{ values: [0.0123, -0.0456] }, { values: [0.0321, 0.0654] }], meta: { usage: { credits_used: 1.2, usd_spent: 0.0000006 } } } })
  async batchEmbedContents(@Body() body: GeminiBatchEmbedContentsRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    const modelName = pathModelOf(request);
    const { model } = this.pipeline.resolveModel(modelName, 'embedContent');
    const dimensions = new Set(body.requests.map((item) => nullsAsAbsent(item).outputDimensionality));
    body.requests.forEach((item, index) => {
      if (item.model !== undefined && this.pipeline.resolveModel(item.model.replace(/^models\//, ''), 'embedContent').model !== model) {
        throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} requests[${index}].model: Expected the path's model '${modelName}'. Received '${item.model}'`);
      }
    });
    if (dimensions.size > 1) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} requests: Expected one outputDimensionality for every request of a batch. Received ${dimensions.size} different ones`);
    }
    const answer = await this.embed(modelName, body.requests.map((item) => embeddedText(item.content)), [...dimensions][0], request, response);
    sendJson(response, 200, { embeddings: answer.data.map((item) => ({ values: item.embedding })), meta: answer.meta });
  }

  @Get('v1beta/models')
  @GeminiErrorResponses({ 400: { description: 'A pageSize or pageToken that is not one', messages: `${ErrorMessages.bodyValidationPrefix} pageToken: Expected the nextPageToken of an earlier page. Received 'x'` } })
  @ApiOperation({ summary: "List the chat and embedding models in Google's Model shape (`models/<catalogue id>`), a page at a time; no key needed, as for GET /v1/models" })
  @ApiQuery({ name: 'pageSize', required: false, description: 'Models per page (default 50, at most 1000)', example: 50 })
  @ApiQuery({ name: 'pageToken', required: false, description: "The previous page's nextPageToken" })
  @ApiOkResponse({
    example: {
      models: [{ name: 'models/openai/gpt-4o-mini', baseModelId: 'openai/gpt-4o-mini', version: '2024-07-18', displayName: 'GPT-4o mini', description: 'Small, fast and inexpensive', inputTokenLimit: 128000, outputTokenLimit: 16384, supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'] }],
      nextPageToken: 'b2Zmc2V0OjUw',
    },
  })
  listModels(@Query('pageSize') pageSize: unknown, @Query('pageToken') pageToken: unknown): unknown {
    return geminiModelPage(this.snapshot().models, pageSize, pageToken);
  }

  @Get('v1beta/models/*model')
  @GeminiErrorResponses({ 404: MODEL_ENDPOINT_ERRORS[404] })
  @ApiOperation({ summary: "One chat or embedding model in Google's Model shape; id or alias, slashes unescaped, a `models/` prefix accepted" })
  @ApiParam({ name: 'model', description: 'A catalogue id or alias (`google/gemini-2.5-flash`)', example: 'gpt-4o-mini' })
  @ApiOkResponse({ example: { name: 'models/openai/gpt-4o-mini', baseModelId: 'openai/gpt-4o-mini', version: '2024-07-18', displayName: 'GPT-4o mini', description: 'Small, fast and inexpensive', inputTokenLimit: 128000, outputTokenLimit: 16384, supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'] } })
  getModel(@PathId('model') name: string): unknown {
    const { model } = this.catalogue.resolveModel(name.replace(/^models\//, ''));
    if (generationMethodsOf(model).length === 0) {
      throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: '${model.id}' is ${model.type}, which the Gemini API does not serve (chat and embedding models only).`);
    }
    return geminiModelOf(model);
  }

  private async generate(body: GeminiGenerateContentRequestDto, request: DirectRequest, response: ServerResponse, stream: 'sse' | 'json-array' | null): Promise<void> {
    const modelName = pathModelOf(request);
    const { model } = this.pipeline.resolveModel(modelName, 'generateContent');
    const { chatRequest, front } = geminiFrontOf({ body, modelName, model, stream, response });
    await respondToChat(this.chat, chatRequest, request, response, undefined, front);
  }

  /** Through the embeddings service, as /v1/embeddings (a client that goes away aborts the upstream call). */
  private embed(modelName: string, input: string[], dimensions: number | undefined, request: DirectRequest, response: ServerResponse): Promise<EmbeddingListDto> {
    this.pipeline.resolveModel(modelName, 'embedContent');
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    const body = { model: modelName, input, ...(dimensions !== undefined ? { dimensions } : {}) } as EmbeddingRequestDto;
    return this.embeddings.embed({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation });
  }

  private snapshot() {
    const index = this.catalogue.current;
    if (!index) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the model catalogue is not loaded yet. Retry shortly.');
    return index;
  }
}
