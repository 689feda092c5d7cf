// Documents (PDF, plain text) sent inline to an emulated chat API, checked as the real APIs
// check them: the data is base64, and a PDF's bytes are a PDF (they start with `%PDF-`).

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PDF_MAGIC = Buffer.from('%PDF-');

/** What is wrong with an inline document's base64 `data` of `mediaType`: 'base64' (does not decode), 'pdf' (not a PDF), or undefined. */
export function inlineDocumentFault(mediaType: string, data: unknown): 'base64' | 'pdf' | undefined {
  if (typeof data !== 'string' || data === '' || data.length % 4 !== 0 || !BASE64.test(data)) return 'base64';
  if (mediaType === 'application/pdf' && !Buffer.from(data, 'base64').subarray(0, 5).equals(PDF_MAGIC)) return 'pdf';
  return undefined;
}

/** A `data:<media type>;base64,<data>` URL's parts (OpenAI's `file_data`), or undefined. */
export function dataUrlParts(url: unknown): { mediaType: string; data: string } | undefined {
  const match = typeof url === 'string' ? /^data:([^;,]+)(?:;[^;,=]+=[^;,]*)*;base64,(.*)$/s.exec(url) : null;
  return match === null ? undefined : { mediaType: match[1], data: match[2] };
}
