import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel } from '@igw/contracts';
import { modelApis } from '@igw/domain';
import { GatewayException } from '@igw/http';

// The catalogue in Google's Model shape (GET /v1beta/models and /v1beta/models/{model}): the
// chat and embedding models, named `models/<catalogue id>` (slashes kept: that is the name a
// client sends back), with the methods of this front each can be called through.

export interface GeminiModel {
  name: string;
  baseModelId: string;
  version: string;
  displayName: string;
  description: string;
  inputTokenLimit: number;
  outputTokenLimit: number;
  supportedGenerationMethods: string[];
  thinking?: boolean;
}

export const GEMINI_DEFAULT_PAGE_SIZE = 50;
export const GEMINI_MAX_PAGE_SIZE = 1000;

const CHAT_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];
const EMBEDDING_METHODS = ['embedContent', 'batchEmbedContents'];

/** The methods of this front a catalogue entry answers (none: the entry is not listed here). */
export function generationMethodsOf(model: Pick<CatalogueModel, 'type' | 'capabilities' | 'tags'>): string[] {
  const apis = modelApis(model);
  if (apis.includes('generateContent')) return CHAT_METHODS;
  if (apis.includes('embedContent')) return EMBEDDING_METHODS;
  return [];
}

export function geminiModelOf(model: CatalogueModel): GeminiModel {
  const info = model.info;
  const entry: GeminiModel = {
    name: `models/${model.id}`,
    baseModelId: model.id,
    version: info.releasedAt ?? '001',
    displayName: info.name,
    description: info.description ?? '',
    inputTokenLimit: info.contextLength ?? 0,
    outputTokenLimit: info.outputMax ?? 0,
    supportedGenerationMethods: generationMethodsOf(model),
  };
  if ((model.capabilities ?? []).includes('reasoning')) entry.thinking = true;
  return entry;
}

/**
 * One page of the list: `pageSize` (default 50, at most 1000) models from `pageToken` (the
 * previous page's `nextPageToken`, an opaque position), and the token of the next page while
 * there is one.
 */
export function geminiModelPage(models: readonly CatalogueModel[], pageSize: unknown, pageToken: unknown): { models: GeminiModel[]; nextPageToken?: string } {
  const size = pageSizeOf(pageSize);
  const start = startOf(pageToken);
  const listed = models.filter((model) => generationMethodsOf(model).length > 0);
  const page: { models: GeminiModel[]; nextPageToken?: string } = { models: listed.slice(start, start + size).map(geminiModelOf) };
  if (start + size < listed.length) page.nextPageToken = Buffer.from(`offset:${start + size}`).toString('base64url');
  return page;
}

function pageSizeOf(value: unknown): number {
  if (value === undefined || value === '') return GEMINI_DEFAULT_PAGE_SIZE;
  const size = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(size) || size < 0) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} pageSize: Expected a whole number of models (at most ${GEMINI_MAX_PAGE_SIZE}). Received '${String(value)}'`);
  }
  return size === 0 ? GEMINI_DEFAULT_PAGE_SIZE : Math.min(size, GEMINI_MAX_PAGE_SIZE);
}

function startOf(value: unknown): number {
  if (value === undefined || value === '') return 0;
  const match = typeof value === 'string' ? /^offset:(\d{1,9})$/.exec(Buffer.from(value, 'base64url').toString('utf8')) : null;
  if (!match) throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} pageToken: Expected the nextPageToken of an earlier page. Received '${String(value).slice(0, 60)}'`);
  return Number(match[1]);
}
