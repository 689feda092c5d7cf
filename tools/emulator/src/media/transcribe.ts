// What the emulated speech-to-text routes "hear" in an upload. A WAV is read exactly: its
// duration from the header, its words from the ICMT comment the emulator's own speech carries
// (else `Emulated transcript of <seconds> seconds of audio.`). Other audio is not decoded:
// its duration is estimated at 128 kbit/s and it gets the default transcript. Bytes that
// claim to be a WAV but are not one, and empty uploads, are refused. `heardSeconds` (the
// `@heard-seconds` control) replaces the duration, as a provider that overstates it.
import { words as splitWords } from '../util';
import { estimatedSeconds, readWav } from './wav';

export interface HeardAudio {
  seconds: number;
  text: string;
  /** Each word with its time span, spread evenly over the audio. */
  words: Array<{ word: string; start: number; end: number }>;
}

export function hear(bytes: Buffer | undefined, heardSeconds?: number): HeardAudio | { problem: string } {
  if (bytes === undefined || bytes.length === 0) return { problem: 'the audio is empty' };
  const looksLikeWav = bytes.length >= 4 && bytes.toString('ascii', 0, 4) === 'RIFF';
  const wav = looksLikeWav ? readWav(bytes) : undefined;
  if (looksLikeWav && wav === undefined) return { problem: 'the audio is a RIFF file without a readable WAVE format and data chunk' };
  const seconds = round(heardSeconds ?? wav?.seconds ?? estimatedSeconds(bytes.length), 6);
  const text = wav?.text ?? `Emulated transcript of ${round(seconds, 2)} seconds of audio.`;
  const list = splitWords(text);
  const span = list.length === 0 ? 0 : seconds / list.length;
  return { seconds, text, words: list.map((word, i) => ({ word, start: round(i * span, 3), end: round((i + 1) * span, 3) })) };
}

export function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** A word without its punctuation, lower-cased (Deepgram's `word`, next to `punctuated_word`). */
export function bareWord(word: string): string {
  return word.replace(/[^\p{L}\p{N}'-]/gu, '').toLowerCase();
}
