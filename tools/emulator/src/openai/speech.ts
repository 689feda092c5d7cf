// POST /v1/audio/speech, as OpenAI answers it: the audio bytes themselves. `input` (at most
// 4096 characters) and `voice` are required; `response_format` mp3 (default), opus, aac, flac,
// wav or pcm; `speed` 0.25 to 4. The sound (media/wav.ts) lasts 0.0625 s per character ÷ speed:
//   wav → a valid 24 kHz mono 16-bit WAV carrying the text in its comment chunk (so the
//         transcription routes hear it back); pcm → the raw samples;
//   mp3, opus, aac, flac → `EMULATED <format> AUDIO\n` + the samples (deterministic, not a
//         valid file of that format: there is no encoder here).
import type { RequestContext } from '../context';
import { speechSamples, SPEECH_SAMPLE_RATE, wavOf } from '../media/wav';
import { isRecord } from '../util';

const CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
export const MAX_SPEECH_INPUT = 4096;

/** The bytes the emulator speaks a text as, in a format (shared with Deepgram's encodings). */
export function spokenAudio(text: string, format: string, sampleRate = SPEECH_SAMPLE_RATE, speed = 1): Buffer {
  const pcm = speechSamples(text, sampleRate, speed);
  if (format === 'wav') return wavOf(pcm, sampleRate, text);
  if (format === 'pcm') return pcm;
  return Buffer.concat([Buffer.from(`EMULATED ${format} AUDIO\n`, 'ascii'), pcm]);
}

export function audioSpeech(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body)) return ctx.error(400, 'The body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') return ctx.error(400, "Missing required parameter: 'model'.", { param: 'model' });
  if (typeof body.input !== 'string' || body.input === '') return ctx.error(400, "Missing required parameter: 'input'.", { param: 'input' });
  if ([...body.input].length > MAX_SPEECH_INPUT) {
    return ctx.error(400, `Invalid 'input': string too long. Expected a string with maximum length ${MAX_SPEECH_INPUT}.`, { param: 'input', code: 'string_above_max_length' });
  }
  if (typeof body.voice !== 'string' || body.voice === '') return ctx.error(400, "Missing required parameter: 'voice'.", { param: 'voice' });
  const format = body.response_format ?? 'mp3';
  if (typeof format !== 'string' || !(format in CONTENT_TYPES)) {
    return ctx.error(400, `Invalid value: '${String(format)}'. Supported values are: ${Object.keys(CONTENT_TYPES).map((f) => `'${f}'`).join(', ')}.`, { param: 'response_format' });
  }
  const speed = body.speed ?? 1;
  if (typeof speed !== 'number' || !(speed >= 0.25 && speed <= 4)) return ctx.error(400, "Invalid 'speed': must be a number from 0.25 to 4.", { param: 'speed' });
  ctx.send(200, spokenAudio(body.input, format, SPEECH_SAMPLE_RATE, speed), CONTENT_TYPES[format]);
}
