import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { HttpStatus, Injectable, SetMetadata, UseGuards, applyDecorators, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@igw/json';
import { GatewayException } from './errors/gateway.exception';
import { noteRequestedModel, startRequestContext, type ServedRequest } from './request-context';

/** BODY_LIMIT (`512kb`, `10mb`, or bytes) in bytes (1 kb = 1024 bytes, as body-parser reads it). */
export function bodyLimitBytes(limit: string): number {
  const match = /^(\d+)(kb|mb)?$/i.exec(limit.trim());
  if (!match) throw new Error(`not a body size: ${limit}`);
  const unit = match[2]?.toLowerCase();
  return Number(match[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1);
}

export function jsonTooDeepMessage(limit = MAX_JSON_DEPTH): string {
  return `${ErrorMessages.bodyValidationPrefix} JSON body nested too deeply: at most ${limit} levels of objects and arrays are accepted.`;
}

export function nonJsonBodyMessage(contentType: string | undefined): string {
  const received = contentType === undefined ? 'none was sent' : `it was ${contentType.slice(0, 64)}`;
  return `Unsupported Media Type: the body must be JSON sent with the header Content-Type: application/json (${received}).`;
}

export function compressedBodyMessage(encoding: string): string {
  return `Unsupported body encoding: request bodies must not be compressed (Content-Encoding: ${encoding}). Send the JSON uncompressed.`;
}

const malformed = (detail: string) => new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} Malformed JSON body: ${detail}`);
const tooLarge = (limitBytes: number) => new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE, `Request body too large: the limit is ${limitBytes} bytes.`);
const unsupportedCharset = (charset: string) => new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, `Unsupported body encoding: unsupported charset "${charset.toUpperCase().slice(0, 32)}"`);
const badBody = (detail: string) => new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${detail}`);

/** A JSON body as read: the parsed value, the text it was parsed from, and that text's bytes as sent. */
export interface JsonBody {
  parsed: unknown;
  text: string;
  bytes: Buffer;
}

/** The 415 for a compressed body, else undefined: `identity` is the only encoding taken. */
function compressedBodyRefusal(headers: IncomingHttpHeaders): GatewayException | undefined {
  const encoding = headers['content-encoding'];
  if (encoding === undefined || encoding.toLowerCase() === 'identity') return undefined;
  return new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, compressedBodyMessage(encoding.slice(0, 32)));
}

/** Whether the request says a body follows (type-is's test). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length'] ?? Number.NaN));
}

/** `application/json` and `application/*+json`, parameters allowed, any case. */
const JSON_TYPE = /^\s*application\/(?:[^\s;/]+\+)?json\s*(?:;|$)/i;
const MULTIPART_TYPE = /^\s*multipart\/form-data\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

/**
 * The body of any request, read once, the same way on every path (Nest's routes through
 * JsonBodyGuard, the direct routes directly): undefined when none follows (or, of a type other
 * than JSON, when it is empty); else the JSON body, or the spec's error for it. The API takes
 * no compressed body (the official SDKs never send one, so every size limit is a plain count of
 * the bytes read); any other type is refused rather than skipped, because the route would then
 * report every required field as missing, hiding the real mistake (curl's `-d` without
 * `-H "Content-Type: application/json"` sends a form).
 */
export function readJsonBody(request: ServedRequest, limitBytes: number): Promise<JsonBody | undefined> {
  const { headers } = request;
  if (!hasBody(headers)) return Promise.resolve(undefined);
  const compressed = compressedBodyRefusal(headers);
  if (compressed) return Promise.reject(compressed);
  const type = headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) {
    const length = Number(headers['content-length'] ?? Number.NaN);
    // An empty body, or a chunked one that names no type, is no body.
    const hasBytes = length > 0 || (headers['transfer-encoding'] !== undefined && type !== undefined);
    return hasBytes ? Promise.reject(new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, nonJsonBodyMessage(type))) : Promise.resolve(undefined);
  }
  const charsetMatch = CHARSET.exec(type);
  const charset = (charsetMatch?.[1] ?? charsetMatch?.[2] ?? 'utf-8').toLowerCase();
  if (!isUtf8(charset) && decoderOf(charset) === undefined) return Promise.reject(unsupportedCharset(charset));
  const declaredLength = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (declaredLength !== undefined && declaredLength > limitBytes) return Promise.reject(tooLarge(limitBytes));
  // The client went away mid-body (or while its key was checked): nobody is left to read the answer.
  if (request.destroyed) return Promise.reject(badBody('request aborted'));
  return readBytes(request, limitBytes, declaredLength, (bytes) => {
    const body = jsonBody(bytes, charset);
    if (request.context) request.context.bodyBytes = bytes.length;
    noteRequestedModel(request, body.parsed);
    return body;
  });
}

/**
 * The body's bytes, refused (413) as soon as they pass the limit. Plain listeners rather than
 * `for await`: the stream's async iterator costs a measurable share of a small request's CPU.
 */
function readBytes<T>(request: ServedRequest, limitBytes: number, declaredLength: number | undefined, finish: (bytes: Buffer) => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limitBytes) chunks.push(chunk);
      else fail(tooLarge(limitBytes));
    };
    const onEnd = () => {
      stopListening();
      if (declaredLength !== undefined && received !== declaredLength) return reject(badBody('request size did not match content length'));
      try {
        resolve(finish(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)));
      } catch (error) {
        reject(error);
      }
    };
    const onAbort = () => fail(badBody('request aborted'));
    const fail = (error: GatewayException) => {
      stopListening();
      // What is left of the body is read and dropped, so the connection can carry the answer.
      request.resume();
      reject(error);
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

function jsonBody(bytes: Buffer, charset: string): JsonBody {
  let text = isUtf8(charset) ? bytes.toString('utf8') : decoderOf(charset)!(bytes);
  // A byte-order mark is not part of the JSON.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (exceedsJsonDepth(text)) throw new GatewayException(HttpStatus.BAD_REQUEST, jsonTooDeepMessage());
  try {
    return { parsed: parseStrictJson(text), text, bytes };
  } catch (error) {
    throw malformed((error as Error).message);
  }
}

function isUtf8(charset: string): boolean {
  return charset === 'utf-8' || charset === 'utf8';
}

/** The decoders of the Unicode charsets JSON may be sent in (RFC 7159 section 8.1), by name. */
function decoderOf(charset: string): ((bytes: Buffer) => string) | undefined {
  if (!charset.startsWith('utf-')) return undefined;
  if (charset === 'utf-32' || charset === 'utf-32be' || charset === 'utf-32le') return (bytes) => utf32Text(bytes, charset);
  // Plain `utf-16` is little-endian unless a byte-order mark says otherwise.
  const label = charset === 'utf-16' ? undefined : charset;
  if (label !== undefined && label !== 'utf-16le' && label !== 'utf-16be') return undefined;
  return (bytes) => new TextDecoder(label ?? (bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : 'utf-16le')).decode(bytes);
}

/** UTF-32, which TextDecoder does not know; big-endian unless named little-endian or a byte-order mark says so. */
function utf32Text(bytes: Buffer, charset: string): string {
  const littleEndian = charset === 'utf-32le' || (charset === 'utf-32' && bytes[0] === 0xff && bytes[1] === 0xfe && bytes[2] === 0 && bytes[3] === 0);
  const codes: number[] = [];
  let text = '';
  for (let offset = 0; offset + 3 < bytes.length; offset += 4) {
    const code = littleEndian ? bytes.readUInt32LE(offset) : bytes.readUInt32BE(offset);
    codes.push(code <= 0x10ffff ? code : 0xfffd);
    if (codes.length === 4096) text += String.fromCodePoint(...codes.splice(0));
  }
  return text + String.fromCodePoint(...codes);
}

const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

/** A strict JSON parse (an object or an array), with body-parser 2's error messages, which clients already see. */
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

/** The body as read for a request (undefined: it had none), for the handlers that need its text (JsonSource). */
export function readBodyOf(request: ServedRequest): JsonBody | undefined {
  return request.context?.body;
}

/**
 * Reads the request's body once, setting `request.body` to the parsed value (as body-parser did)
 * and keeping what was read in the request's context (started by the server for every request).
 */
export function takeJsonBody(request: ServedRequest & { body?: unknown }, limitBytes: number): Promise<true> {
  if (request.context?.body) return Promise.resolve(true);
  return readJsonBody(request, limitBytes).then((body) => {
    if (body) {
      if (request.context) request.context.body = body;
      request.body = body.parsed;
    }
    return true;
  });
}

/**
 * Lets go of what takeJsonBody kept (bytes, text and parsed value: megabytes for a long prompt)
 * once the answer is over: a keep-alive connection holds its last request until the next arrives.
 */
export function releaseJsonBody(request: ServedRequest & { body?: unknown }): void {
  if (request.context) request.context.body = undefined;
  request.body = undefined;
}

const MULTIPART_ROUTE = 'igw:multipart-route';
const CREDENTIAL_FIRST = 'igw:credential-first';

/**
 * Marks a route whose body is a multipart/form-data upload it parses itself (an interceptor of
 * its own, after the guards): the JSON reader leaves such a body unread instead of refusing it.
 */
export const TakesMultipartBody = (): MethodDecorator => SetMetadata(MULTIPART_ROUTE, true);

/** What a route's metadata says of its body, read once per controller method (it never changes at run time). */
const bodyRules = new WeakMap<object, { multipart: boolean; credentialFirst: boolean }>();

function bodyRulesOf(context: ExecutionContext): { multipart: boolean; credentialFirst: boolean } {
  const handler = context.getHandler();
  let rules = bodyRules.get(handler);
  if (!rules) {
    rules = {
      multipart: Reflect.getMetadata(MULTIPART_ROUTE, handler) === true,
      credentialFirst: Reflect.getMetadata(CREDENTIAL_FIRST, handler) === true || Reflect.getMetadata(CREDENTIAL_FIRST, context.getClass()) === true,
    };
    bodyRules.set(handler, rules);
  }
  return rules;
}

/**
 * Reads every JSON body of the app's routes (a global guard, so no interceptor wraps each
 * request). A route with a credential guard (RequireApiKey, RequireAdminToken) has its body read
 * by BodyAfterCredential, listed right after that guard, so a request without a valid key or
 * token is refused from its headers before a byte of its body is read.
 */
export class JsonBodyGuard implements CanActivate {
  constructor(private readonly limitBytes: number) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<ServedRequest>();
    if (!hasBody(request.headers)) return true;
    const rules = bodyRulesOf(context);
    if (rules.multipart && MULTIPART_TYPE.test(request.headers['content-type'] ?? '')) {
      const compressed = compressedBodyRefusal(request.headers);
      if (compressed) throw compressed;
      return true;
    }
    if (rules.credentialFirst) {
      (request.context ?? startRequestContext(request, context.switchToHttp().getResponse<ServerResponse>())).bodyReadAfterCredential = this.limitBytes;
      return true;
    }
    return takeJsonBody(request, this.limitBytes);
  }
}

/** Reads the body JsonBodyGuard left for after the route's credential check. */
@Injectable()
export class BodyAfterCredential implements CanActivate {
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<ServedRequest>();
    const limitBytes = request.context?.bodyReadAfterCredential;
    if (limitBytes === undefined) return true;
    request.context!.bodyReadAfterCredential = undefined;
    return takeJsonBody(request, limitBytes);
  }
}

/** A credential guard, then the body: what RequireApiKey and RequireAdminToken apply. */
export function UseCredentialGuard(guard: new (...args: never[]) => CanActivate): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(CREDENTIAL_FIRST, true), UseGuards(guard, BodyAfterCredential));
}
