import { ErrorMessages, type ErrorBodyDto, type ErrorDetailDto } from '@igw/contracts';
import type { ServedRequest } from '../request-context';

export function buildErrorBody(request: ServedRequest, statusCode: number, message: string): ErrorBodyDto {
  return {
    message,
    path: (request.originalUrl ?? request.url ?? '').split('?')[0],
    requestId: request.context?.requestId ?? '',
    statusCode,
    timestamp: new Date().toISOString(),
    error: errorDetail(statusCode, message),
  };
}

/**
 * The `error` object OpenAI's SDKs read their exception's message, type, code and param from
 * (they ignore the spec's top-level `message`). Derived from the status and the message, so
 * every error of every service carries it without its thrower knowing about it.
 */
export function errorDetail(statusCode: number, message: string): ErrorDetailDto {
  return { message, type: errorType(statusCode), code: errorCode(statusCode, message), param: errorParam(statusCode, message) };
}

function errorType(statusCode: number): string {
  if (statusCode === 401) return 'authentication_error';
  if (statusCode === 403) return 'permission_error';
  if (statusCode === 404) return 'not_found_error';
  if (statusCode === 429) return 'rate_limit_error';
  if (statusCode >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** What every 401 of a missing or wrong API key starts with, whichever header it names. */
const API_KEY_REQUIRED = ErrorMessages.invalidApiKey.slice(0, ErrorMessages.invalidApiKey.indexOf(' Send it as'));
const UNKNOWN_MODEL = /^Not Found: no model named /;
/** The Responses API's previous_response_id naming no stored response, as OpenAI words and codes it. */
const PREVIOUS_RESPONSE = /^Previous response with id '.*' not found\.$/;

function errorCode(statusCode: number, message: string): string | null {
  switch (statusCode) {
    case 401:
      return message.startsWith(API_KEY_REQUIRED) ? 'invalid_api_key' : 'invalid_admin_token';
    case 403:
      if (message === ErrorMessages.creditsExhausted) return 'insufficient_quota';
      if (message === ErrorMessages.accountSuspended) return 'account_suspended';
      return null;
    case 404:
      if (UNKNOWN_MODEL.test(message)) return 'model_not_found';
      return PREVIOUS_RESPONSE.test(message) ? 'previous_response_not_found' : null;
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_exceeded';
    default:
      return null;
  }
}

/**
 * The field a 400 is about, when its message names one: `Body validation error! <path>: ...`
 * (the first field when several are wrong), or `Unsupported value: '<path>' ...`.
 */
const VALIDATION_FIELD = new RegExp(`^${ErrorMessages.bodyValidationPrefix.replace(/[.*+?^${}()|[\]\\!]/g, '\\$&')} ([\\w$-]+(?:\\.[\\w$-]+|\\[\\d+\\])*): `);
const UNSUPPORTED_FIELD = /^Unsupported value: '([\w$-]+(?:\.[\w$-]+|\[\d+\])*)'/;

function errorParam(statusCode: number, message: string): string | null {
  if (statusCode !== 400) return null;
  return VALIDATION_FIELD.exec(message)?.[1] ?? UNSUPPORTED_FIELD.exec(message)?.[1] ?? null;
}
