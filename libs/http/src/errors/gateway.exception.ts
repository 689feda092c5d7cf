import { HttpException } from '@nestjs/common';

/**
 * An error whose message is meant for the client as is. Services throw it (or Nest's
 * HttpExceptions) and the global filter renders the spec's error body.
 */
export class GatewayException extends HttpException {
  constructor(statusCode: number, message: string, options?: { cause?: unknown; headers?: Record<string, string> }) {
    super(message, statusCode, { cause: options?.cause });
    this.headers = options?.headers ?? {};
  }

  readonly headers: Record<string, string>;
}
