import { ErrorMessages } from '@igw/contracts';
import express, { type NextFunction, type Request, type Response } from 'express';
import { buildErrorBody } from '../errors/error-body';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** JSON bodies only; anything the parser rejects gets the spec's error body. */
export function jsonBodyParser(limit: string) {
  return express.json({ limit, type: ['application/json', 'application/*+json'] });
}

export function bodyParserErrorHandler(error: BodyParserError, request: Request, response: Response, next: NextFunction): void {
  if (!error.type) {
    next(error);
    return;
  }
  const { status, message } = describeBodyError(error);
  response.status(status).json(buildErrorBody(request, status, message));
}

function describeBodyError(error: BodyParserError): { status: number; message: string } {
  switch (error.type) {
    case 'entity.parse.failed':
      return { status: 400, message: `${ErrorMessages.bodyValidationPrefix} Malformed JSON body: ${error.message}` };
    case 'entity.too.large':
      return { status: 413, message: `Request body too large: the limit is ${error.limit} bytes.` };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, message: `Unsupported body encoding: ${error.message}` };
    default:
      return { status: error.status && error.status < 500 ? error.status : 400, message: `${ErrorMessages.bodyValidationPrefix} ${error.message}` };
  }
}
