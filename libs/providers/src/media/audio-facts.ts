import type { SpeechFormat } from '../provider.types';

/**
 * Reads one parse may make (a frame or page header, a box, a tag each; an MP3 frame costs four):
 * about 60,000 MP3 frames, 25 minutes of variable-rate audio with no length header. A file
 * that needs more (tiny frames, thousands of empty pages) has no readable length.
 */
const MAX_READS_PER_PARSE = 250_000;
/** Reads between two turns of the event loop: a few milliseconds of parsing, so other requests go on meanwhile. */
const READS_PER_TURN = 1_000;

/**
 * The length in seconds of a WAV, MP3, Ogg (Opus, Vorbis, FLAC), M4A/MP4, FLAC, WebM or other
 * file music-metadata reads, judged by its bytes whatever its content type says; undefined when
 * the bytes carry no length it can read within MAX_READS_PER_PARSE (the caller then relies on
 * the provider's figure).
 */
export async function audioDurationSeconds(bytes: Buffer): Promise<number | undefined> {
  // Loaded on first use: only a gateway that transcribes pays for the parsers (about 40 ms, 16 MB).
  const [{ parseFromTokenizer }, { fromBuffer }] = await Promise.all([import('music-metadata'), import('strtok3')]);
  const tokenizer = fromBuffer(bytes);
  // Every read of a buffer tokenizer (tokens, numbers, buffers) is a peek: counting it bounds the parse.
  const peek = tokenizer.peekBuffer.bind(tokenizer);
  let reads = 0;
  tokenizer.peekBuffer = async (buffer, options) => {
    reads++;
    if (reads > MAX_READS_PER_PARSE) throw new RangeError(`the file needs more than ${MAX_READS_PER_PARSE} reads`);
    if (reads % READS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    return peek(buffer, options);
  };
  try {
    const { format } = await parseFromTokenizer(tokenizer, { duration: true, skipCovers: true });
    const seconds = format.duration;
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
  } catch {
    // Not audio it knows, a broken file, or one too costly to read: its length is unknown.
    return undefined;
  }
}

/** A RIFF/WAVE file, by its first twelve bytes. */
function isWav(bytes: Buffer): boolean {
  return bytes.length >= 12 && bytes.toString('ascii', 0, 4) === 'RIFF' && bytes.toString('ascii', 8, 12) === 'WAVE';
}

const CONTENT_TYPES: Record<SpeechFormat, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
  pcm: 'audio/pcm',
};

/** The `Content-Type` of audio in a speech format, for answers whose upstream gave none. */
export function speechContentType(format: SpeechFormat): string {
  return CONTENT_TYPES[format];
}

const EXTENSIONS: Record<string, string> = {
  'audio/wav': 'wav',
  'audio/wave': 'wav',
  'audio/x-wav': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mp4': 'm4a',
  'audio/m4a': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/webm': 'webm',
  'video/webm': 'webm',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'video/mp4': 'mp4',
};

/**
 * A file name for an upload: OpenAI picks the decoder by the extension, so `audio.wav` for WAV,
 * `audio.mp3` for MPEG. Unknown types get `audio.wav` when the bytes are a WAV, else `audio.mp3`.
 */
export function audioFilename(contentType: string, bytes: Buffer): string {
  const type = contentType.split(';')[0].trim().toLowerCase();
  const known = EXTENSIONS[type];
  if (known) return `audio.${known}`;
  return isWav(bytes) ? 'audio.wav' : 'audio.mp3';
}

/** Characters as people and price lists count them: Unicode code points, not UTF-16 units. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
