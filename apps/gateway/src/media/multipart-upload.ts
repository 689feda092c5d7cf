import { applyDecorators, HttpStatus, Inject, Injectable, mixin, UseInterceptors, type CallHandler, type ExecutionContext, type NestInterceptor, type Type } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import { ErrorMessages } from '@igw/contracts';
import { GatewayException, TakesMultipartBody } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { describeBytes, type MediaLease } from '@igw/providers';
import type { Request, Response } from 'express';
import multer, { MulterError, type StorageEngine } from 'multer';
import type { Readable } from 'node:stream';
import { from, switchMap, type Observable } from 'rxjs';
import { MediaFetcher, mediaBudgetException } from './media-fetcher';

/** One file field of a form and how many files it may carry. */
export interface UploadField {
  name: string;
  maxCount: number;
}

export interface UploadPolicy {
  files: readonly UploadField[];
  /** Text fields that are numbers in the route's DTO: a numeric string becomes a number before validation. */
  numberFields: readonly string[];
}

/** An uploaded file as the routes read it. */
export interface UploadedPart {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** The form's files by field name, set on the request by MultipartUpload. */
export type UploadedParts = Record<string, UploadedPart[]>;

declare module 'express-serve-static-core' {
  interface Request {
    uploads?: UploadedParts;
  }
}

/** Room for the form's text fields and part headers next to its files, in a declared length. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;
/** The longest text field: an image prompt of 32,000 characters, four bytes each. */
const MAX_FIELD_BYTES = 128 * 1024;
const MAX_FIELDS = 32;

/** A route whose body is a multipart/form-data form: parsed by MultipartUpload, documented as such. */
export function AcceptsUpload(policy: UploadPolicy): MethodDecorator {
  return applyDecorators(TakesMultipartBody(), UseInterceptors(MultipartUpload(policy)), ApiConsumes('multipart/form-data'));
}

/**
 * Parses a multipart/form-data body with multer into `request.body` (text fields) and
 * `request.uploads` (files), after the key was checked (guards run first). The files together
 * are bounded by MEDIA_FETCH_MAX_BYTES and held in the process's media budget, in the key's
 * share of it, until the response is over, as a fetched file is. An upload declared or found
 * larger is answered 413 at once and its connection closed: the rest is never read. A client
 * that leaves mid-upload ends the request before anything is admitted or sent, so nothing is billed.
 */
export function MultipartUpload(policy: UploadPolicy): Type<NestInterceptor> {
  @Injectable()
  class MultipartUploadInterceptor implements NestInterceptor {
    constructor(
      private readonly fetcher: MediaFetcher,
      @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
    ) {}

    intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
      const http = context.switchToHttp();
      return from(this.parse(http.getRequest<Request>(), http.getResponse<Response>())).pipe(switchMap(() => next.handle()));
    }

    private parse(request: Request, response: Response): Promise<void> {
      const maxBytes = this.settings.env.MEDIA_FETCH_MAX_BYTES;
      if (!/^multipart\/form-data/i.test(request.headers['content-type'] ?? '')) {
        return Promise.reject(new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} the body must be a multipart/form-data form (content-type: multipart/form-data; boundary=...)`));
      }
      let closing = false;
      const tooLarge = () => {
        // The client may still be sending: the answer goes out, then the connection closes.
        if (!closing && !response.headersSent) {
          closing = true;
          response.set('connection', 'close');
          response.once('finish', () => request.socket.destroy());
        }
        return new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE, `Payload Too Large: the uploaded files are larger than the gateway's limit of ${describeBytes(maxBytes)} (MEDIA_FETCH_MAX_BYTES).`);
      };
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes + FORM_OVERHEAD_BYTES) return Promise.reject(tooLarge());
      const lease = this.fetcher.leaseUpload(request.context.auth?.keyId ?? 'anonymous');
      response.once('close', lease.release);
      return new Promise<void>((resolve, reject) => {
        let settled = false;
        const fail = (error: unknown) => {
          if (settled) return;
          settled = true;
          reject(error);
        };
        const storage = new BoundedMemoryStorage(maxBytes, lease, (refusal) => {
          if (refusal === 'too-large') return fail(tooLarge());
          if (refusal === 'released') return fail(new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} the upload ended before it was complete`));
          fail(mediaBudgetException(refusal === 'holder-share-full' ? 'holder' : 'process', this.settings.env, 'upload', 'could not be taken now: the gateway holds as much media as it may at once'));
        });
        const parse = multer({
          storage,
          limits: { fileSize: maxBytes, fieldSize: MAX_FIELD_BYTES, fields: MAX_FIELDS, files: policy.files.reduce((sum, field) => sum + field.maxCount, 0) },
        }).fields(policy.files.map((field) => ({ name: field.name, maxCount: field.maxCount })));
        parse(request, response, (error?: unknown) => {
          // After a refusal already answered, multer's own report of it has no one to reach.
          if (settled) return;
          if (error !== undefined && error !== null) return fail(uploadError(error, tooLarge));
          settled = true;
          request.body = numbersOf({ ...(request.body as Record<string, unknown>) }, policy.numberFields);
          request.uploads = partsOf(request.files as Record<string, Express.Multer.File[]> | undefined);
          resolve();
        });
      });
    }
  }
  return mixin(MultipartUploadInterceptor);
}

/** A numeric string of a number field becomes that number; anything else stays for the DTO to name. */
function numbersOf(fields: Record<string, unknown>, numberFields: readonly string[]): Record<string, unknown> {
  for (const name of numberFields) {
    const value = fields[name];
    if (typeof value === 'string' && /^\s*-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) fields[name] = Number(value);
  }
  return fields;
}

function partsOf(files: Record<string, Express.Multer.File[]> | undefined): UploadedParts {
  const parts: UploadedParts = {};
  for (const [field, list] of Object.entries(files ?? {})) {
    parts[field] = list.map((file) => ({ field, filename: file.originalname, contentType: file.mimetype, bytes: file.buffer }));
  }
  return parts;
}

/** multer's refusals in the spec's words, naming the field where there is one. */
function uploadError(error: unknown, tooLarge: () => GatewayException): unknown {
  if (error instanceof GatewayException) return error;
  const prefix = ErrorMessages.bodyValidationPrefix;
  if (error instanceof MulterError) {
    const field = error.field ?? 'the form';
    switch (error.code) {
      case 'LIMIT_FILE_SIZE':
        return tooLarge();
      case 'LIMIT_UNEXPECTED_FILE':
        return new GatewayException(HttpStatus.BAD_REQUEST, `${prefix} ${field}: is not a file field of this route, or carries more files than it takes`);
      case 'LIMIT_FIELD_VALUE':
        return new GatewayException(HttpStatus.BAD_REQUEST, `${prefix} ${field}: Expected at most ${MAX_FIELD_BYTES} bytes`);
      default:
        return new GatewayException(HttpStatus.BAD_REQUEST, `${prefix} ${field}: ${error.message}`);
    }
  }
  // busboy: a form cut short (the client left) or malformed.
  return new GatewayException(HttpStatus.BAD_REQUEST, `${prefix} the multipart/form-data body could not be read: ${(error as Error).message}`);
}

type UploadRefusal = 'too-large' | 'budget-full' | 'holder-share-full' | 'released';

/**
 * multer's memory storage, bounded: the files of one form together hold at most `maxBytes`,
 * each chunk claimed in the media budget as it arrives. A refusal is reported at once (the
 * interceptor answers without waiting for multer to drain the rest of the body).
 */
class BoundedMemoryStorage implements StorageEngine {
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly lease: MediaLease,
    private readonly refuse: (refusal: UploadRefusal) => void,
  ) {}

  _handleFile(_request: Request, file: Express.Multer.File & { stream: Readable }, callback: (error?: unknown, info?: Partial<Express.Multer.File>) => void): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    file.stream.on('data', (chunk: Buffer) => {
      if (refused) return;
      this.total += chunk.length;
      const refusal: UploadRefusal | undefined = this.total > this.maxBytes ? 'too-large' : this.lease.claim(chunk.length);
      if (refusal) {
        refused = true;
        chunks.length = 0;
        this.refuse(refusal);
        file.stream.resume();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    file.stream.once('error', (error) => callback(error));
    file.stream.once('end', () => {
      if (refused) return callback(new MulterError('LIMIT_FILE_SIZE', file.fieldname));
      callback(undefined, { buffer: Buffer.concat(chunks), size });
    });
  }

  _removeFile(_request: Request, file: Express.Multer.File, callback: (error: Error | null) => void): void {
    (file as { buffer?: Buffer }).buffer = undefined;
    callback(null);
  }
}
