import type { IncomingHttpHeaders } from 'node:http';
import { HttpStatus, SetMetadata, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { ErrorMessages, exceedsJsonDepth, MAX_JSON_DEPTH } from '@igw/contracts';
import express, { type Request, type Response } from 'express';
import { from, switchMap, type Observable } from 'rxjs';
import { GatewayException } from '../errors/gateway.exception';
import { noteRequestedModel, type ServedRequest } from './request-context';

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

export function jsonTooDeepMessage(limit = MAX_JSON_DEPTH): string {
  return `${ErrorMessages.bodyValidationPrefix} JSON body nested too deeply: at most ${limit} levels of objects and arrays are accepted.`;
}

const JSON_TOO_DEEP = 'entity.too.deep';

/**
 * The text body-parser is about to parse, for the depth check. UTF-8 is read as Latin-1: the
 * bytes of quotes, backslashes and brackets never occur inside a multi-byte UTF-8 character,
 * and one-byte strings are the cheapest to make and scan.
 */
function bodyText(body: Buffer, charset: string | undefined): string {
  const name = (charset ?? 'utf-8').toLowerCase();
  if (isUtf8(name)) return body.toString('latin1');
  if (name.startsWith('utf-32') || name.startsWith('utf32')) return utf32Text(body, name);
  // Plain `utf-16` is little-endian unless a byte-order mark says otherwise (as iconv-lite reads it).
  const label = (name === 'utf-16' || name === 'utf16') && body[0] === 0xfe && body[1] === 0xff ? 'utf-16be' : name;
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return body.toString('latin1');
  }
}

/** UTF-32 (which TextDecoder does not know) as text; only its ASCII characters matter here. */
function utf32Text(body: Buffer, name: string): string {
  const bigEndian = name.endsWith('be') || (!name.endsWith('le') && body.length >= 4 && body[0] === 0 && body[1] === 0);
  const ascii = Buffer.alloc(body.length >> 2);
  for (let offset = 0; offset + 3 < body.length; offset += 4) {
    const code = bigEndian ? body.readUInt32BE(offset) : body.readUInt32LE(offset);
    ascii[offset >> 2] = code < 0x80 ? code : 0x20;
  }
  return ascii.toString('latin1');
}

/**
 * body-parser's `verify` hook: records the size of the body as read (what holds and context
 * checks are computed from) and refuses a body nested too deeply before it is parsed.
 */
function checkJsonBody(request: ServedRequest, _response: unknown, body: Buffer, charset: string | undefined): void {
  if (request.context) request.context.bodyBytes = body.length;
  // Most bodies have too few brackets to go deep: counted on the bytes, without decoding.
  if (isUtf8(charset) && !bytesHaveMoreOpeningsThan(body, MAX_JSON_DEPTH)) return;
  if (exceedsJsonDepth(bodyText(body, charset))) throw Object.assign(new Error(jsonTooDeepMessage()), { type: JSON_TOO_DEEP, status: HttpStatus.BAD_REQUEST });
}

function isUtf8(charset: string | undefined): boolean {
  const name = (charset ?? 'utf-8').toLowerCase();
  return name === 'utf-8' || name === 'utf8';
}

function bytesHaveMoreOpeningsThan(body: Buffer, limit: number): boolean {
  let count = 0;
  for (let index = body.indexOf('{'); index !== -1; index = body.indexOf('{', index + 1)) if (++count > limit) return true;
  for (let index = body.indexOf('['); index !== -1; index = body.indexOf('[', index + 1)) if (++count > limit) return true;
  return false;
}

/** Whether the request says a body follows (type-is's test, as body-parser makes it). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length'] ?? Number.NaN));
}

/**
 * The API takes no compressed body: the official SDKs never send one, and refusing them keeps
 * every size limit a plain count of the bytes read, with nothing to inflate.
 */
function refuseEncodedBody(headers: IncomingHttpHeaders): void {
  const encoding = headers['content-encoding'];
  if (encoding === undefined || encoding.toLowerCase() === 'identity' || !hasBody(headers)) return;
  throw new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, compressedBodyMessage(encoding.slice(0, 32)));
}

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * A body in any other type would be skipped by the JSON parser, and the route would then report
 * every required field as missing ("model: ... Received nothing"), which hides the real mistake
 * (curl's `-d` without `-H "Content-Type: application/json"` sends a form). An empty body, or a
 * chunked one that names no type, is left to the route as before.
 */
function refuseNonJsonBody(request: Request): void {
  const type = request.headers['content-type'];
  const length = Number(request.headers['content-length'] ?? Number.NaN);
  const hasBytes = length > 0 || (request.headers['transfer-encoding'] !== undefined && type !== undefined);
  if (!hasBytes || request.is(JSON_TYPES)) return;
  throw new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, nonJsonBodyMessage(type));
}

export function nonJsonBodyMessage(contentType: string | undefined): string {
  const received = contentType === undefined ? 'none was sent' : `it was ${contentType.slice(0, 64)}`;
  return `Unsupported Media Type: the body must be JSON sent with the header Content-Type: application/json (${received}).`;
}

export function compressedBodyMessage(encoding: string): string {
  return `Unsupported body encoding: request bodies must not be compressed (Content-Encoding: ${encoding}). Send the JSON uncompressed.`;
}

const MULTIPART_ROUTE = 'igw:multipart-route';

/**
 * Marks a route whose body is a multipart/form-data upload it parses itself (an interceptor of
 * its own, after the guards): the JSON reader leaves such a body unread instead of refusing it.
 */
export const TakesMultipartBody = (): MethodDecorator => SetMetadata(MULTIPART_ROUTE, true);

/**
 * Reads every JSON body of the app's routes, with body-parser's JSON parser within
 * `limitBytes`. As an interceptor it runs after the route's guards: a request without a valid
 * key or admin token is refused from its headers before a byte of its body is read. Anything
 * the parser rejects gets the spec's error body.
 */
export class JsonBodyInterceptor implements NestInterceptor {
  private readonly parseJson;

  constructor(limitBytes: number) {
    // `inflate: false`: refuseEncodedBody already answered any encoded body.
    this.parseJson = express.json({ limit: limitBytes, type: JSON_TYPES, inflate: false, verify: checkJsonBody });
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    if (!hasBody(request.headers)) return next.handle();
    if (Reflect.getMetadata(MULTIPART_ROUTE, context.getHandler()) === true && request.is('multipart/form-data')) {
      refuseEncodedBody(request.headers);
      return next.handle();
    }
    return from(this.read(request, http.getResponse<Response>())).pipe(switchMap(() => next.handle()));
  }

  /** Sets `request.body` (when the body is JSON), or throws the error the client gets. */
  read(request: Request, response: Response): Promise<void> {
    try {
      refuseEncodedBody(request.headers);
      refuseNonJsonBody(request);
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    return new Promise((resolve, reject) => {
      this.parseJson(request, response, (error?: unknown) => {
        if (!error) {
          noteRequestedModel(request, request.body);
          resolve();
        }
        else reject((error as BodyParserError).type ? bodyError(error as BodyParserError) : error);
      });
    });
  }
}

function bodyError(error: BodyParserError): GatewayException {
  switch (error.type) {
    case 'entity.parse.failed':
      return new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} Malformed JSON body: ${error.message}`);
    case JSON_TOO_DEEP:
      return new GatewayException(HttpStatus.BAD_REQUEST, jsonTooDeepMessage());
    case 'entity.too.large':
      return new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE, `Request body too large: the limit is ${error.limit} bytes.`);
    case 'charset.unsupported':
      return new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, `Unsupported body encoding: ${error.message}`);
    default:
      return new GatewayException(error.status && error.status < 500 ? error.status : HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${error.message}`);
  }
}

/** A JSON body as parsed, with the text it was parsed from and that text's bytes. */
export interface JsonBody {
  parsed: unknown;
  text: string;
  bytes: Buffer;
}

/**
 * The body of a request a direct route claimed: one with `content-length` within the limit,
 * no content encoding and a UTF-8 JSON content type (the route leaves every other request
 * to Express). Parsed exactly as body-parser's strict JSON parser does, so a malformed body
 * gets the same error either way; its size is recorded as body-parser's is.
 */
export function readJsonBody(request: ServedRequest): Promise<JsonBody> {
  // The client went away mid-body (or while its key was checked): what body-parser says then
  // (nobody is left to read it).
  const aborted = () => bodyError({ name: 'BadRequestError', message: 'request aborted', type: 'request.aborted', status: HttpStatus.BAD_REQUEST });
  if (request.destroyed) return Promise.reject(aborted());
  // Plain listeners rather than `for await`: the stream's async iterator costs a measurable
  // share of a small request's CPU.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const onEnd = () => {
      stopListening();
      try {
        const body = parseJsonBody(chunks);
        if (request.context) request.context.bodyBytes = body.bytes.length;
        noteRequestedModel(request, body.parsed);
        resolve(body);
      } catch (error) {
        reject(error);
      }
    };
    const onAbort = () => {
      stopListening();
      reject(aborted());
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

function parseJsonBody(chunks: Buffer[]): JsonBody {
  const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  let text = bytes.toString('utf8');
  // body-parser's decoder (iconv-lite) drops a byte-order mark.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (exceedsJsonDepth(text)) throw new GatewayException(HttpStatus.BAD_REQUEST, jsonTooDeepMessage());
  try {
    return { parsed: parseStrictJson(text), text, bytes };
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
