// Audio output of chat completions (`modalities: ['text', 'audio']` + `audio: {voice, format}`),
// played the way OpenAI's audio models answer, with deterministic bytes so tests can compute
// what they should receive.
//
// The sound: 24 kHz mono 16-bit little-endian PCM, one 20 ms tone (480 samples, 960 bytes) per
// word of the transcript, its pitch picked by a hash of the word (200 to 999 Hz).
//   `pcm16` → those raw samples;
//   `wav`   → a 44-byte RIFF/WAVE header (PCM, 1 channel, 24000 Hz, 16 bits) + the samples:
//             a valid, playable file;
//   `mp3`, `flac`, `opus`, `aac` → the ASCII tag `EMULATED <format> AUDIO\n` + the samples:
//             deterministic, but NOT a valid file of that format (no encoder here).
// Tokens: each word of the transcript is 1 text token plus AUDIO_TOKENS_PER_WORD audio tokens;
// the audio tokens go in `completion_tokens_details.audio_tokens` and count in
// `completion_tokens` (as OpenAI counts them).
import { hashText, isRecord } from '../util';

export const AUDIO_FORMATS = ['wav', 'mp3', 'flac', 'opus', 'pcm16', 'aac'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];
export const AUDIO_SAMPLE_RATE = 24_000;
export const SAMPLES_PER_WORD = 480;
export const AUDIO_TOKENS_PER_WORD = 4;
/** `expires_at` = the completion's `created` + this (OpenAI keeps audio an hour for multi-turn use). */
export const AUDIO_EXPIRY_SECONDS = 3600;
/** Streams: decoded bytes per `delta.audio.data` piece (a multiple of 3, so every piece is whole base64). */
export const AUDIO_DATA_PIECE_BYTES = 1920;

export interface AudioRequest {
  voice: string;
  format: AudioFormat;
}

/**
 * The audio output the request asks for: undefined when `modalities` does not include
 * 'audio'; a 400 message (with its param) when it does but `audio` is missing or malformed.
 */
export function parseAudioRequest(body: Record<string, unknown>): AudioRequest | undefined | { message: string; param: string } {
  const modalities = body.modalities;
  if (modalities === undefined || modalities === null) return undefined;
  if (!Array.isArray(modalities) || !modalities.every((m) => m === 'text' || m === 'audio')) {
    return { message: "Invalid 'modalities': expected an array of 'text' and 'audio'.", param: 'modalities' };
  }
  if (!modalities.includes('audio')) return undefined;
  const audio = body.audio;
  if (!isRecord(audio)) {
    return { message: "Audio output requires the 'audio' parameter with 'voice' and 'format' when 'modalities' includes 'audio'.", param: 'audio' };
  }
  if (typeof audio.voice !== 'string' || audio.voice === '') return { message: "Missing required parameter: 'audio.voice'.", param: 'audio.voice' };
  if (typeof audio.format !== 'string' || !(AUDIO_FORMATS as readonly string[]).includes(audio.format)) {
    return { message: `Invalid value for 'audio.format': supported values are ${AUDIO_FORMATS.map((f) => `'${f}'`).join(', ')}.`, param: 'audio.format' };
  }
  return { voice: audio.voice, format: audio.format as AudioFormat };
}

/** The PCM16 samples for a transcript's words (see the header). */
export function audioSamples(words: readonly string[]): Buffer {
  const pcm = Buffer.alloc(words.length * SAMPLES_PER_WORD * 2);
  words.forEach((word, w) => {
    const frequency = 200 + (hashText(word) % 800);
    for (let i = 0; i < SAMPLES_PER_WORD; i++) {
      const sample = Math.round(8000 * Math.sin((2 * Math.PI * frequency * i) / AUDIO_SAMPLE_RATE));
      pcm.writeInt16LE(sample, (w * SAMPLES_PER_WORD + i) * 2);
    }
  });
  return pcm;
}

/** The bytes the emulator answers for a transcript in a format: what `message.audio.data` decodes to. */
export function emulatedAudio(transcript: string, format: AudioFormat): Buffer {
  const words = transcript.trim() === '' ? [] : transcript.trim().split(/\s+/);
  const pcm = audioSamples(words);
  if (format === 'pcm16') return pcm;
  if (format === 'wav') return Buffer.concat([wavHeader(pcm.length), pcm]);
  return Buffer.concat([Buffer.from(`EMULATED ${format} AUDIO\n`, 'ascii'), pcm]);
}

export function audioTokens(wordCount: number): number {
  return wordCount * AUDIO_TOKENS_PER_WORD;
}

/** Base64 pieces of `bytes`, AUDIO_DATA_PIECE_BYTES each (the last shorter); none for no bytes. */
export function audioDataPieces(bytes: Buffer): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < bytes.length; at += AUDIO_DATA_PIECE_BYTES) pieces.push(bytes.subarray(at, at + AUDIO_DATA_PIECE_BYTES).toString('base64'));
  return pieces;
}

function wavHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(AUDIO_SAMPLE_RATE, 24);
  header.writeUInt32LE(AUDIO_SAMPLE_RATE * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}
