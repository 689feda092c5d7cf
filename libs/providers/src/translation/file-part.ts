// What the chat translations (Anthropic, Gemini) read of a content part carrying media: a
// base64 data URL, and a `file` part's document. Sources that take OpenAI's format get the part
// as sent; the others need the bytes inline, so a file id (a file of the operator's provider
// account) or anything but a base64 data URL of an accepted media type cannot be sent to them.
import type { FileDataDto } from '@igw/contracts';

/** Document media types the non-OpenAI chat sources take inline. */
export const INLINE_DOCUMENT_TYPES = ['application/pdf', 'text/plain'] as const;
export type InlineDocumentType = (typeof INLINE_DOCUMENT_TYPES)[number];

/** `data:<media type>[;<parameter>...];base64,<data>`: the media type as written (parameters such as charset dropped). */
const BASE64_DATA_URL = /^data:([^;,]+)(?:;[^;,=]+=[^;,]*)*;base64,(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A base64 data URL's media type and data, or undefined for any other string. */
export function base64DataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = BASE64_DATA_URL.exec(url);
  return match === null ? undefined : { mediaType: match[1], data: match[2] };
}

export interface InlineDocument {
  mediaType: InlineDocumentType;
  /** The base64 data as sent. */
  data: string;
  filename?: string;
}

/** Why a file part cannot be sent inline, and the field at fault (the gateway's 400 puts it ahead of the reason). */
export interface FileRefusal {
  refusal: string;
  param: string;
}

const ACCEPTED = `a base64 data URL of a PDF or plain text (data:application/pdf;base64,... or data:text/plain;base64,...)`;

/**
 * The document a chat `file` part (`{type: 'file', file: {file_data, filename}}` at `path`)
 * carries, or why `provider` cannot be sent it.
 */
export function inlineDocumentOf(file: FileDataDto, path: string, provider: string): InlineDocument | FileRefusal {
  const dataPath = `${path}.file.file_data`;
  if (file.file_id !== undefined && file.file_id !== null) {
    return { param: `${path}.file.file_id`, refusal: `a file id cannot be sent to ${provider}; send the file itself as file_data, ${ACCEPTED}` };
  }
  const parsed = file.file_data ? base64DataUrl(file.file_data) : undefined;
  if (parsed === undefined) return { param: dataPath, refusal: `Expected ${ACCEPTED}` };
  const mediaType = parsed.mediaType.toLowerCase();
  if (!(INLINE_DOCUMENT_TYPES as readonly string[]).includes(mediaType)) {
    return { param: dataPath, refusal: `media type ${JSON.stringify(parsed.mediaType)} cannot be sent to ${provider}; it takes ${INLINE_DOCUMENT_TYPES.join(' and ')}` };
  }
  if (parsed.data === '' || !BASE64.test(parsed.data) || parsed.data.length % 4 !== 0) return { param: dataPath, refusal: `the data after "base64," is not non-empty base64` };
  const document: InlineDocument = { mediaType: mediaType as InlineDocumentType, data: parsed.data };
  if (file.filename) document.filename = file.filename;
  return document;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A plain-text document's text, or undefined when its bytes are not UTF-8. */
export function documentText(data: string): string | undefined {
  try {
    return UTF8.decode(Buffer.from(data, 'base64'));
  } catch {
    return undefined;
  }
}
