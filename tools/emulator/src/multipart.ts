// A minimal multipart/form-data reader for the routes that take uploads (OpenAI
// transcriptions, Stability images): text fields become a record (a repeated name keeps
// its values in a list, as `timestamp_granularities[]` needs), file parts keep their bytes.
import type { UploadedFile } from './context';

export interface MultipartForm {
  fields: Record<string, string | string[]>;
  files: UploadedFile[];
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');

/** The form in `body`, or undefined when the content type has no boundary or the body is not such a form. */
export function parseMultipart(body: Buffer, contentType: string): MultipartForm | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const form: MultipartForm = { fields: {}, files: [] };
  let at = body.indexOf(delimiter);
  if (at === -1) return undefined;
  for (;;) {
    const afterDelimiter = at + delimiter.length;
    // `--boundary--` closes the form.
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) return form;
    const headersStart = afterDelimiter + 2;
    const headersEnd = body.indexOf(CRLF_CRLF, headersStart);
    if (headersEnd === -1) return undefined;
    const next = body.indexOf(delimiter, headersEnd + 4);
    if (next === -1) return undefined;
    // The part's content ends with the CRLF that precedes the next delimiter.
    const content = body.subarray(headersEnd + 4, next - 2);
    const headers = body.toString('utf8', headersStart, headersEnd);
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    if (name !== undefined) {
      if (filename !== undefined) {
        const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? 'application/octet-stream';
        form.files.push({ field: name, filename, contentType: type, data: Buffer.from(content) });
      } else {
        const value = content.toString('utf8');
        const existing = form.fields[name];
        form.fields[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
      }
    }
    at = next;
  }
}
