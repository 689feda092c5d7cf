import type { TranscriptFormat } from '@igw/contracts';
import type { UpstreamTranscriptionResult } from '@igw/providers';

/** One timed stretch of a transcript, as OpenAI's `verbose_json` segments carry them. */
export interface TranscriptSegment {
  id: number;
  start: number;
  end: number;
  text: string;
  [field: string]: unknown;
}

/** A transcript in one of OpenAI's answer formats: the body and its content type. */
export interface TranscriptAnswer {
  body: string | Record<string, unknown>;
  contentType: string;
}

export interface TranscriptShape {
  format: TranscriptFormat;
  task: 'transcribe' | 'translate';
  /** `timestamp_granularities[]` as asked; absent: segments only, as OpenAI answers. */
  granularities?: readonly string[];
  /** Seconds of audio (the gateway's reading, at least the provider's). */
  duration: number;
  /** Seconds billed. */
  billedSeconds: number;
}

/**
 * The segments of the answer: the provider's, when it gave timed ones (Whisper's verbose_json),
 * else the whole transcript as one segment over the whole audio.
 */
export function transcriptSegments(result: UpstreamTranscriptionResult, duration: number): TranscriptSegment[] {
  const given = Array.isArray(result.raw.segments) ? result.raw.segments : [];
  const timed = given.filter(
    (segment): segment is TranscriptSegment =>
      typeof segment === 'object' && segment !== null && typeof (segment as TranscriptSegment).start === 'number' && typeof (segment as TranscriptSegment).end === 'number' && typeof (segment as TranscriptSegment).text === 'string',
  );
  if (timed.length > 0) return timed.map((segment, index) => ({ ...segment, id: typeof segment.id === 'number' ? segment.id : index }));
  return result.transcript === '' ? [] : [{ id: 0, start: 0, end: duration, text: result.transcript }];
}

/** `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT). */
export function cueTimestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/**
 * OpenAI's answer for each `response_format`: json `{text, usage}`; text, srt and vtt as
 * text/plain; verbose_json with task, language, duration, text, and `segments` and/or `words`
 * as `timestamp_granularities[]` asks (segments when it names none). The gateway asks its
 * upstream for the richest format the model gives and derives the one asked for, so every
 * format is served on every speech-to-text model and billed the same.
 */
export function openAiTranscript(result: UpstreamTranscriptionResult, shape: TranscriptShape): TranscriptAnswer {
  const text = result.transcript;
  const usage = { type: 'duration', seconds: shape.billedSeconds };
  const segments = () => transcriptSegments(result, shape.duration);
  switch (shape.format) {
    case 'text':
      return { body: `${text}\n`, contentType: 'text/plain; charset=utf-8' };
    case 'srt':
      return { body: segments().map((segment, index) => `${index + 1}\n${cueTimestamp(segment.start, ',')} --> ${cueTimestamp(segment.end, ',')}\n${segment.text.trim()}\n\n`).join(''), contentType: 'text/plain; charset=utf-8' };
    case 'vtt':
      return { body: `WEBVTT\n\n${segments().map((segment) => `${cueTimestamp(segment.start, '.')} --> ${cueTimestamp(segment.end, '.')}\n${segment.text.trim()}\n\n`).join('')}`, contentType: 'text/plain; charset=utf-8' };
    case 'verbose_json': {
      const granularities = shape.granularities ?? ['segment'];
      const body: Record<string, unknown> = { task: shape.task, language: shape.task === 'translate' ? 'english' : (result.language ?? 'unknown'), duration: shape.duration, text };
      if (granularities.includes('word')) body.words = (result.words ?? []).map((word) => ({ word: word.word, start: word.start, end: word.end }));
      if (granularities.includes('segment')) body.segments = segments();
      body.usage = usage;
      return { body, contentType: 'application/json; charset=utf-8' };
    }
    default:
      return { body: { text, usage }, contentType: 'application/json; charset=utf-8' };
  }
}
