import { HttpStatus } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { sendErrorResponse } from '../errors/all-exceptions.filter';
import type { ServedRequest } from './request-context';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** BODY_LIMIT (`512kb`, `10mb`, or bytes) in bytes, read the way body-parser reads it (1 kb = 1024 bytes). */
export function bodyLimitBytes(limit: string): number {
  const match = /^(\d+)(kb|mb)?$/i.exec(limit.trim());
  if (!match) throw new Error(`not a body size: ${limit}`);
  const unit = match[2]?.toLowerCase();
  return Number(match[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1);
}

/** JSON bodies only; anything the parser rejects gets the spec's error body. */
export function jsonBodyParser(limitBytes: number) {
  return express.json({ limit: limitBytes, type: ['application/json', 'application/*+json'] });
}

export function bodyParserErrorHandler(error: BodyParserError, request: Request, response: Response, next: NextFunction): void {
  if (!error.type) {
    next(error);
    return;
  }
  sendErrorResponse(request, response, bodyError(error));
}

function bodyError(error: BodyParserError): GatewayException {
  switch (error.type) {
    case 'entity.parse.failed':
      return new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} Malformed JSON body: ${error.message}`);
    case 'entity.too.large':
      return new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE, `Request body too large: the limit is ${error.limit} bytes.`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, `Unsupported body encoding: ${error.message}`);
    default:
      return new GatewayException(error.status && error.status < 500 ? error.status : HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${error.message}`);
  }
}

/**
 * The body of a request a direct route claimed: one with `content-length` within the limit,
 * no content encoding and a UTF-8 JSON content type (the route leaves every other request
 * to Express). Parsed exactly as body-parser's strict JSON parser does, so a malformed body
 * gets the same error either way.
 */
export function readJsonBody(request: ServedRequest): Promise<unknown> {
  // Plain listeners rather than `for await`: the stream's async iterator costs a measurable
  // share of a small request's CPU.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => {
      stopListening();
      try {
        resolve(parseJsonBody(chunks));
      } catch (error) {
        reject(error);
      }
    };
    // The client went away mid-body: what body-parser says then (nobody is left to read it).
    const onAbort = () => {
      stopListening();
      reject(bodyError({ name: 'BadRequestError', message: 'request aborted', type: 'request.aborted', status: HttpStatus.BAD_REQUEST }));
    };
    const stopListening = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onAbort);
      request.off('close', onAbort);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onAbort);
    request.on('close', onAbort);
  });
}

function parseJsonBody(chunks: Buffer[]): unknown {
  let text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
  // body-parser's decoder (iconv-lite) drops a byte-order mark.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return parseStrictJson(text);
  } catch (error) {
    throw bodyError(Object.assign(error as Error, { type: 'entity.parse.failed' }));
  }
}

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

/** body-parser 2's strict JSON parse (lib/types/json.js): an object or an array, with its error messages. */
function parseStrictJson(body: string): unknown {
  if (body.length === 0) return {};
  if (body[0] !== '{' && body[0] !== '[') {
    const first = FIRST_NON_WHITESPACE.exec(body)?.[1] || undefined;
    if (first !== '{' && first !== '[') throw strictViolation(body, first);
  }
  return JSON.parse(body);
}

function strictViolation(body: string, first: string | undefined): SyntaxError {
  const index = first === undefined ? -1 : body.indexOf(first);
  const partial = index === -1 ? '' : body.substring(0, index) + '#'.repeat(body.length - index);
  try {
    JSON.parse(partial);
    return new SyntaxError('strict violation');
  } catch (error) {
    return new SyntaxError((error as Error).message.replace(/#+/g, (placeholder) => body.substring(index, index + placeholder.length)));
  }
}
