import { ApiProperty } from '@nestjs/swagger';
import { BODY_VALIDATION_PREFIX } from '@igw/validation';

/**
 * The same error as OpenAI's SDKs read it (`error.message` becomes the exception's message).
 * `message` is the spec's top-level message, unchanged.
 */
export class ErrorDetailDto {
  @ApiProperty({ description: 'The same text as the top-level message', example: 'Body validation error! messages: Required' })
  message!: string;

  @ApiProperty({
    description: "OpenAI's error type for the status",
    enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'rate_limit_error', 'api_error'],
    example: 'invalid_request_error',
  })
  type!: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'A machine-readable reason when there is one: invalid_api_key, invalid_admin_token, insufficient_quota, account_suspended, model_not_found, rate_limit_exceeded, request_too_large',
    example: null,
  })
  code!: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'The path of the request field a validation error is about (the first one), when known', example: 'messages' })
  param!: string | null;
}

/** The one error body of every service (spec, "Errors"), with OpenAI's `error` object beside it. */
export class ErrorBodyDto {
  @ApiProperty({ description: 'Human-readable explanation', example: 'Body validation error! messages: Required' })
  message!: string;

  @ApiProperty({ description: 'Endpoint path that was called', example: '/v1/chat/completions' })
  path!: string;

  @ApiProperty({ description: 'Unique id of the request, also sent as the x-request-id header' })
  requestId!: string;

  @ApiProperty({ description: 'HTTP status code of the error', example: 400 })
  statusCode!: number;

  @ApiProperty({ description: 'Time of the error, ISO 8601', example: '2026-01-01T00:00:00.000Z' })
  timestamp!: string;

  @ApiProperty({ type: ErrorDetailDto, description: "The error in OpenAI's shape, for the official SDKs" })
  error!: ErrorDetailDto;
}

/** Message prefixes and texts that the spec fixes; kept in one place so every service says the same. */
export const ErrorMessages = {
  bodyValidationPrefix: BODY_VALIDATION_PREFIX,
  invalidApiKey: 'Unauthorized: a valid API key is required. Send it as "Authorization: Bearer <API_KEY>".',
  /** The 401 of a route whose clients send the key in a header of their own (`x-api-key`, `x-goog-api-key`); Bearer is accepted there too. */
  invalidApiKeyIn: (header: string, alsoAs?: string) =>
    `Unauthorized: a valid API key is required. Send it as "${header}"${alsoAs ? ` ${alsoAs}` : ''} (or "Authorization: Bearer <API_KEY>").`,
  invalidAdminToken: 'Unauthorized: a valid admin token is required. Send it as "Authorization: Bearer <ADMIN_TOKEN>".',
  creditsExhausted:
    'Forbidden: this API key has no credits left. Top up your balance or update your payment method to continue.',
  accountSuspended: 'Forbidden: this account is suspended. Contact the administrator, or top up and update the payment method to have it reactivated.',
  tooManyRequests: 'Too Many Requests',
  freeTierExhausted: (limit: number) =>
    `Too Many Requests: the free plan's limit of ${limit} requests for this hour is used up. Upgrade to a paid plan to continue, or retry next hour.`,
  notFound: 'Not Found',
  internal: 'Internal Server Error',
} as const;
