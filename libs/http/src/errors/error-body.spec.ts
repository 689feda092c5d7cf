import { ErrorMessages } from '@igw/contracts';
import { buildErrorBody, errorDetail } from './error-body';
import type { ServedRequest } from '../request-context';

describe("the error body's OpenAI error object", () => {
  it.each<[number, string, { type: string; code: string | null; param: string | null }]>([
    [400, 'Body validation error! max_tokens: Expected an integer. Received 40.5', { type: 'invalid_request_error', code: null, param: 'max_tokens' }],
    [400, "Body validation error! messages[0].content[1].type: Expected one of 'text'. Received 'x'; model: Expected a non-empty string. Received nothing", { type: 'invalid_request_error', code: null, param: 'messages[0].content[1].type' }],
    [400, 'Body validation error! logit_bias.50256: Expected a number from -100 to 100. Received 150', { type: 'invalid_request_error', code: null, param: 'logit_bias.50256' }],
    [400, "Unsupported value: 'messages[1].role' does not support 'system' with this model.", { type: 'invalid_request_error', code: null, param: 'messages[1].role' }],
    [400, 'Body validation error! Malformed JSON body: Unexpected end of JSON input', { type: 'invalid_request_error', code: null, param: null }],
    [400, 'Body validation error! JSON body nested too deeply: at most 128 levels of objects and arrays are accepted.', { type: 'invalid_request_error', code: null, param: null }],
    [401, ErrorMessages.invalidApiKey, { type: 'authentication_error', code: 'invalid_api_key', param: null }],
    [401, ErrorMessages.invalidApiKeyIn('x-goog-api-key: <API_KEY>', 'or as ?key=<API_KEY>'), { type: 'authentication_error', code: 'invalid_api_key', param: null }],
    [401, 'Unauthorized: a valid admin token is required. Send it as "Authorization: Bearer <ADMIN_TOKEN>".', { type: 'authentication_error', code: 'invalid_admin_token', param: null }],
    [403, ErrorMessages.creditsExhausted, { type: 'permission_error', code: 'insufficient_quota', param: null }],
    [403, ErrorMessages.accountSuspended, { type: 'permission_error', code: 'account_suspended', param: null }],
    [404, "Not Found: no model named 'acme/x' in the catalogue.", { type: 'not_found_error', code: 'model_not_found', param: null }],
    [404, 'Not Found', { type: 'not_found_error', code: null, param: null }],
    [404, "Previous response with id 'resp_123' not found.", { type: 'not_found_error', code: 'previous_response_not_found', param: null }],
    [404, "Response with id 'resp_123' not found.", { type: 'not_found_error', code: null, param: null }],
    [413, 'Request body too large: the limit is 1024 bytes.', { type: 'invalid_request_error', code: 'request_too_large', param: null }],
    [415, 'Unsupported body encoding: unsupported charset "LATIN-1"', { type: 'invalid_request_error', code: null, param: null }],
    [429, ErrorMessages.tooManyRequests, { type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null }],
    [429, ErrorMessages.freeTierExhausted(100), { type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null }],
    [500, ErrorMessages.internal, { type: 'api_error', code: null, param: null }],
    [502, 'Bad Gateway: the upstream provider groq failed (500).', { type: 'api_error', code: null, param: null }],
  ])('%i %s', (status, message, expected) => {
    expect(errorDetail(status, message)).toEqual({ message, ...expected });
  });

  it('sits beside the spec fields, with the same message', () => {
    const request = { url: '/v1/chat/completions?x=1', context: { requestId: 'req-1' } } as unknown as ServedRequest;
    const body = buildErrorBody(request, 400, 'Body validation error! n: Expected an integer. Received 1.5');
    expect(body).toEqual({
      message: 'Body validation error! n: Expected an integer. Received 1.5',
      path: '/v1/chat/completions',
      requestId: 'req-1',
      statusCode: 400,
      timestamp: expect.any(String),
      error: { message: 'Body validation error! n: Expected an integer. Received 1.5', type: 'invalid_request_error', code: null, param: 'n' },
    });
  });
});
