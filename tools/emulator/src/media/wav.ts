// WAV files the emulator makes and reads. Made: mono 16-bit PCM sine tones with a valid RIFF
// header; the spoken text, when there is one, rides along in a `LIST`/`INFO`/`ICMT` (comment)
// chunk, so a transcription route given the emulator's own speech answers with that text
// (a text-to-speech → speech-to-text round trip is exact). Read: the duration from the `fmt `
// byte rate and the `data` size, and that comment.
import { hashText } from '../util';

export const SPEECH_SAMPLE_RATE = 24_000;
/** Emulated speech lasts this long per character of text (a brisk 16 characters a second). */
export const SECONDS_PER_CHARACTER = 0.0625;
/** The text of GET /media/sample.wav, what transcribing it answers. */
export const SAMPLE_TEXT = 'The quick brown fox jumps over the lazy dog.';
export const SAMPLE_SECONDS = 2;
/** Longest tone GET /media/tone.wav makes. */
export const MAX_TONE_SECONDS = 600;

export interface WavOptions {
  seconds: number;
  sampleRate?: number;
  /** Hz; default 440. */
  frequency?: number;
  /** Stored in the ICMT comment chunk, read back by `readWav`. */
  text?: string;
}

/** Raw 16-bit little-endian mono samples of a sine tone. */
export function toneSamples(seconds: number, sampleRate: number, frequency: number): Buffer {
  const count = Math.max(0, Math.round(seconds * sampleRate));
  const pcm = Buffer.alloc(count * 2);
  // One period repeated: exact for frequencies that divide the rate, inaudibly close otherwise.
  const period = Math.max(1, Math.round(sampleRate / frequency));
  const cycle = new Int16Array(period);
  for (let i = 0; i < period; i++) cycle[i] = Math.round(8000 * Math.sin((2 * Math.PI * i) / period));
  for (let i = 0; i < count; i++) pcm.writeInt16LE(cycle[i % period], i * 2);
  return pcm;
}

/** A playable WAV: RIFF header, `fmt `, an optional `LIST`/`INFO` comment with the text, `data`. */
export function makeWav(options: WavOptions): Buffer {
  const sampleRate = options.sampleRate ?? SPEECH_SAMPLE_RATE;
  const pcm = toneSamples(options.seconds, sampleRate, options.frequency ?? 440);
  return wavOf(pcm, sampleRate, options.text);
}

/** Wraps PCM16 mono samples in a WAV file. */
export function wavOf(pcm: Buffer, sampleRate: number, text?: string): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(sampleRate, 12);
  fmt.writeUInt32LE(sampleRate * 2, 16); // byte rate
  fmt.writeUInt16LE(2, 20); // block align
  fmt.writeUInt16LE(16, 22); // bits per sample
  const chunks: Buffer[] = [fmt];
  if (text !== undefined && text !== '') chunks.push(commentChunk(text));
  const dataHead = Buffer.alloc(8);
  dataHead.write('data', 0, 'ascii');
  dataHead.writeUInt32LE(pcm.length, 4);
  chunks.push(dataHead, pcm);
  if (pcm.length % 2 === 1) chunks.push(Buffer.alloc(1));
  const head = Buffer.alloc(12);
  const size = chunks.reduce((sum, chunk) => sum + chunk.length, 4);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(size, 4);
  head.write('WAVE', 8, 'ascii');
  return Buffer.concat([head, ...chunks]);
}

function commentChunk(text: string): Buffer {
  const value = Buffer.from(`${text}\0`, 'utf8');
  const padded = value.length % 2 === 0 ? value : Buffer.concat([value, Buffer.alloc(1)]);
  const chunk = Buffer.alloc(20 + padded.length);
  chunk.write('LIST', 0, 'ascii');
  chunk.writeUInt32LE(12 + padded.length, 4);
  chunk.write('INFO', 8, 'ascii');
  chunk.write('ICMT', 12, 'ascii');
  chunk.writeUInt32LE(value.length, 16);
  padded.copy(chunk, 20);
  return chunk;
}

export interface WavFacts {
  seconds: number;
  sampleRate: number;
  channels: number;
  /** The ICMT comment, if any (the text the emulator spoke). */
  text?: string;
}

/** Facts of a WAV file; undefined when the bytes are not a readable RIFF/WAVE with `fmt ` and `data`. */
export function readWav(bytes: Buffer): WavFacts | undefined {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let format: { sampleRate: number; channels: number; byteRate: number } | undefined;
  let text: string | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const start = offset + 8;
    const end = Math.min(bytes.length, start + size);
    if (id === 'fmt ' && end - start >= 16) {
      format = { channels: bytes.readUInt16LE(start + 2), sampleRate: bytes.readUInt32LE(start + 4), byteRate: bytes.readUInt32LE(start + 8) };
    } else if (id === 'LIST' && bytes.toString('ascii', start, start + 4) === 'INFO') {
      text = infoComment(bytes.subarray(start + 4, end)) ?? text;
    } else if (id === 'data') {
      if (format === undefined || format.byteRate === 0) return undefined;
      return { seconds: (end - start) / format.byteRate, sampleRate: format.sampleRate, channels: format.channels, ...(text === undefined ? {} : { text }) };
    }
    offset = start + size + (size % 2);
  }
  return undefined;
}

function infoComment(info: Buffer): string | undefined {
  let offset = 0;
  while (offset + 8 <= info.length) {
    const id = info.toString('ascii', offset, offset + 4);
    const size = info.readUInt32LE(offset + 4);
    if (id === 'ICMT') return info.toString('utf8', offset + 8, Math.min(info.length, offset + 8 + size)).replace(/\0+$/, '');
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

/** How long the emulator takes to say a text, at `speed` (1 = normal); never under 0.1 s. */
export function speechSeconds(text: string, speed = 1): number {
  return Math.max(0.1, ([...text].length * SECONDS_PER_CHARACTER) / speed);
}

/** The PCM16 samples of the emulator saying `text`: a tone whose pitch follows a hash of the text. */
export function speechSamples(text: string, sampleRate: number, speed = 1): Buffer {
  return toneSamples(speechSeconds(text, speed), sampleRate, 200 + (hashText(text) % 600));
}

/**
 * Seconds of audio in an upload that is not a WAV the emulator can read: bytes at 128 kbit/s
 * (what an MP3 of speech typically is). Providers decode; the emulator estimates.
 */
export function estimatedSeconds(bytes: number): number {
  return bytes / 16_000;
}
