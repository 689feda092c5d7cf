// Bedrock's errors: `{"message": "..."}` with the exception's name in `x-amzn-ErrorType`.
import type { RequestContext } from '../context';
import type { AwsRefusal } from './auth';

/** Bedrock's error type (`x-amzn-ErrorType`) and message for an HTTP status. */
export function bedrockError(status: number): { type: string; message: string } {
  switch (status) {
    case 400:
      return { type: 'ValidationException', message: 'The input request is invalid.' };
    case 403:
      return { type: 'AccessDeniedException', message: "You don't have access to the model with the specified model ID." };
    case 404:
      return { type: 'ResourceNotFoundException', message: 'The requested resource could not be found.' };
    case 408:
      return { type: 'ModelTimeoutException', message: 'The request took too long to process.' };
    case 424:
      return { type: 'ModelErrorException', message: 'The model returned an error.' };
    case 429:
      return { type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' };
    case 503:
      return { type: 'ServiceUnavailableException', message: 'Bedrock is unable to process your request.' };
    default:
      return status >= 500 ? { type: 'InternalServerException', message: 'The server encountered an error processing your request.' } : { type: 'ValidationException', message: 'The input request is invalid.' };
  }
}

/** Answers with Bedrock's error body and type. */
export function refuse(ctx: RequestContext, refusal: AwsRefusal): void {
  ctx.json(refusal.status, { message: refusal.message }, { 'x-amzn-errortype': `${refusal.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': ctx.requestId });
}

