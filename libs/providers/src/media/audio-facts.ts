import type { SpeechFormat } from '../provider.types';

/**
 * The length in seconds of a RIFF/WAVE file, from its `fmt ` and `data` chunks; undefined when
 * the bytes are not a WAV this can read (then the caller relies on the provider's figure).
 * A `data` size past the end of the buffer (streamed WAVs write 0xFFFFFFFF) counts the bytes present.
 */
export function wavDurationSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const start = offset + 8;
    if (id === 'fmt ' && start + 16 <= bytes.length) byteRate = bytes.readUInt32LE(start + 8);
    if (id === 'data') {
      if (!byteRate) return undefined;
      return Math.min(size, bytes.length - start) / byteRate;
    }
    // Chunks are padded to an even size.
    offset = start + size + (size % 2);
  }
  return undefined;
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
  return wavDurationSeconds(bytes) !== undefined ? 'audio.wav' : 'audio.mp3';
}

/** Characters as people and price lists count them: Unicode code points, not UTF-16 units. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
