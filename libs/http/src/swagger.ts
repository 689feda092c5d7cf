import { applyDecorators, type INestApplication } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, DocumentBuilder, getSchemaPath, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ErrorBodyDto, ErrorMessages } from '@igw/contracts';
import { errorDetail } from './errors/error-body';
import { observeSwaggerUi } from './request-observer';
import { compressedBodyMessage, nonJsonBodyMessage } from './body-parsing';

/** The security scheme of API keys (`ApiBearerAuth()`'s default name) and of the admin token. */
export const API_KEY_SCHEME = 'bearer';
export const ADMIN_SCHEME = 'admin';

/** An error status with one message, or several named ones (the UI offers them in a list). */
export type ErrorExamples = string | Record<string, string>;

/** The statuses an operation documents, each with the real message(s) its callers get. */
export type ErrorResponses = Partial<Record<400 | 401 | 403 | 404 | 413 | 415 | 429 | 502 | 503 | 504, { description: string; messages: ErrorExamples }>>;

const EXAMPLE_REQUEST_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const EXAMPLE_TIMESTAMP = '2026-11-24T12:00:00.000Z';

/**
 * The spec's error body as the service sends it for that status and message. Its `path` is
 * filled in with the operation's own path when the document is built (`errorExamplesOnTheirPaths`).
 */
export function errorBodyExample(statusCode: number, message: string): ErrorBodyDto {
  return { message, path: '', requestId: EXAMPLE_REQUEST_ID, statusCode, timestamp: EXAMPLE_TIMESTAMP, error: errorDetail(statusCode, message) };
}

/**
 * Documents error statuses with the error body schema and, per status, the body the caller
 * really gets: without it Swagger UI shows the schema's one example (a 400) under every status.
 * A route that answers in another API's error shape (ShapedErrorFilter) documents it with the same `shape`.
 */
export function ApiErrorResponses(errors: ErrorResponses, shape: (body: ErrorBodyDto) => object = (body) => body) {
  const example = (statusCode: number, message: string) => shape(errorBodyExample(statusCode, message));
  return applyDecorators(
    ApiExtraModels(ErrorBodyDto),
    ...Object.entries(errors).map(([status, { description, messages }]) => {
      const statusCode = Number(status);
      const schema = { $ref: getSchemaPath(ErrorBodyDto) };
      if (typeof messages === 'string') return ApiResponse({ status: statusCode, description, schema, example: example(statusCode, messages) });
      const examples = Object.fromEntries(Object.entries(messages).map(([name, message]) => [name, { summary: message, value: example(statusCode, message) }]));
      return ApiResponse({ status: statusCode, description, schema, examples });
    }),
  );
}

/** What a route that requires an API key answers without a usable one (`RequireApiKey`). */
export const API_KEY_ERRORS = {
  401: { description: 'Missing, invalid or revoked API key', messages: ErrorMessages.invalidApiKey },
  403: { description: 'No credits left for the request, or the account is suspended', messages: { credits: ErrorMessages.creditsExhausted, suspended: ErrorMessages.accountSuspended } },
} satisfies ErrorResponses;

/**
 * The errors the gateway's model endpoints share beyond 400 (which each words itself) and
 * 401/403 (documented by `RequireApiKey`). Values in the messages are examples.
 */
export const MODEL_ENDPOINT_ERRORS = {
  404: { description: 'Unknown model', messages: "Not Found: no model named 'gpt-0' in the catalogue. GET /v1/models lists the model ids and aliases a request can use." },
  413: { description: 'The body is larger than BODY_LIMIT', messages: 'Request body too large: the limit is 10485760 bytes.' },
  415: {
    description: 'The body is not sent as JSON (its Content-Type is not application/json), or is compressed (any Content-Encoding but identity)',
    messages: { notJson: nonJsonBodyMessage('application/x-www-form-urlencoded'), compressed: compressedBodyMessage('gzip') },
  },
  429: {
    description: "The key's rate or concurrency limit, the free plan's hourly limit, or the upstream's own limit",
    messages: { rate: ErrorMessages.tooManyRequests, freePlan: ErrorMessages.freeTierExhausted(100) },
  },
  502: { description: 'The upstream provider failed', messages: 'Bad Gateway: the upstream provider openai failed (500).' },
  503: {
    description: 'No upstream is configured for the model, an upstream cannot be reached, or keys cannot be verified (billing down)',
    messages: {
      noUpstream: "Service Unavailable: no upstream is configured for model 'openai/gpt-4o-mini'. Set OPENAI_API_KEY or AZURE_OPENAI_API_KEY.",
      unreachable: 'Service Unavailable: the upstream provider openai cannot be reached.',
      billing: 'API keys cannot be verified right now: the billing service is not answering. Retry shortly.',
    },
  },
  504: { description: 'The upstream did not answer within UPSTREAM_TIMEOUT_MS (or routing.timeoutSeconds of the model); its prompt is billed', messages: 'Gateway Timeout: openai did not answer within 120000 ms.' },
} satisfies ErrorResponses;

/**
 * Builds the OpenAPI document: only the security schemes the service's operations use (the
 * gateway never takes the admin token), and every error example carrying its operation's path.
 */
export function setUpSwagger(app: INestApplication, swagger: { title: string; description: string; path?: string }): void {
  const config = new DocumentBuilder()
    .setTitle(swagger.title)
    .setDescription(swagger.description)
    .setVersion('1.0.0')
    // addSecurity, not addBearerAuth: that one claims bearerFormat JWT, and these tokens are opaque.
    .addSecurity(API_KEY_SCHEME, { type: 'http', scheme: 'bearer', description: 'An API key, sent as "Authorization: Bearer <API_KEY>"' })
    .addSecurity(ADMIN_SCHEME, { type: 'http', scheme: 'bearer', description: 'The ADMIN_TOKEN, sent as "Authorization: Bearer <ADMIN_TOKEN>"' })
    .build();
  const build = () => errorExamplesOnTheirPaths(onlyUsedSecuritySchemes(SwaggerModule.createDocument(app, config)));
  const docs = swagger.path ?? 'docs';
  observeSwaggerUi(docs);
  SwaggerModule.setup(docs, app, build, { jsonDocumentUrl: `${docs}-json`, swaggerOptions: { persistAuthorization: true, displayRequestDuration: true } });
}

type Operation = { security?: Array<Record<string, unknown>>; responses?: Record<string, { content?: Record<string, { example?: unknown; examples?: Record<string, { value?: unknown }> }> }> };

function operationsOf(document: OpenAPIObject): Array<[string, Operation]> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.values(item as Record<string, Operation>)
      .filter((operation) => typeof operation === 'object' && operation !== null && 'responses' in operation)
      .map((operation): [string, Operation] => [path, operation]),
  );
}

function onlyUsedSecuritySchemes(document: OpenAPIObject): OpenAPIObject {
  const schemes = document.components?.securitySchemes;
  if (!schemes) return document;
  const used = new Set(operationsOf(document).flatMap(([, operation]) => (operation.security ?? []).flatMap((requirement) => Object.keys(requirement))));
  for (const name of Object.keys(schemes)) if (!used.has(name)) delete schemes[name];
  return document;
}

function errorExamplesOnTheirPaths(document: OpenAPIObject): OpenAPIObject {
  for (const [path, operation] of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (Number(status) < 400) continue;
      // Copies: one method's metadata may serve several paths (/v1/chat/completions and /chat/completions).
      for (const media of Object.values(response.content ?? {})) {
        if (isErrorBody(media.example)) media.example = { ...media.example, path };
        if (media.examples) {
          media.examples = Object.fromEntries(
            Object.entries(media.examples).map(([name, example]) => [name, isErrorBody(example.value) ? { ...example, value: { ...example.value, path } } : example]),
          );
        }
      }
    }
  }
  return document;
}

function isErrorBody(body: unknown): body is ErrorBodyDto {
  return typeof body === 'object' && body !== null && 'requestId' in body && 'statusCode' in body && 'path' in body;
}
