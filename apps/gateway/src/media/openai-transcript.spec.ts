import type { UpstreamTranscriptionResult } from '@igw/providers';
import { cueTimestamp, openAiTranscript, transcriptSegments } from './openai-transcript';

const plain: UpstreamTranscriptionResult = { model: 'gpt-4o-mini-transcribe', transcript: 'Hello there.', raw: {} };
const whisper: UpstreamTranscriptionResult = {
  model: 'whisper-1',
  transcript: 'Hello there. General Kenobi.',
  language: 'english',
  words: [
    { word: 'Hello', start: 0, end: 0.5, confidence: 0.9 },
    { word: 'there.', start: 0.5, end: 1 },
  ],
  raw: {
    segments: [
      { id: 0, seek: 0, start: 0, end: 1.2, text: ' Hello there.' },
      { id: 1, seek: 0, start: 1.2, end: 3661.5, text: ' General Kenobi.' },
      { start: 'bad' },
    ],
  },
};
const shape = { task: 'transcribe' as const, duration: 2.5, billedSeconds: 3 };

describe("transcripts in OpenAI's response formats", () => {
  it('json: the text and the seconds billed', () => {
    expect(openAiTranscript(plain, { ...shape, format: 'json' })).toEqual({ body: { text: 'Hello there.', usage: { type: 'duration', seconds: 3 } }, contentType: 'application/json; charset=utf-8' });
  });

  it('text, srt and vtt as text/plain; subtitles from the timed segments, else one cue over the whole audio', () => {
    expect(openAiTranscript(plain, { ...shape, format: 'text' })).toEqual({ body: 'Hello there.\n', contentType: 'text/plain; charset=utf-8' });
    expect(openAiTranscript(plain, { ...shape, format: 'srt' }).body).toBe('1\n00:00:00,000 --> 00:00:02,500\nHello there.\n\n');
    expect(openAiTranscript(whisper, { ...shape, format: 'srt' }).body).toBe('1\n00:00:00,000 --> 00:00:01,200\nHello there.\n\n2\n00:00:01,200 --> 01:01:01,500\nGeneral Kenobi.\n\n');
    expect(openAiTranscript(whisper, { ...shape, format: 'vtt' })).toEqual({
      body: 'WEBVTT\n\n00:00:00.000 --> 00:00:01.200\nHello there.\n\n00:00:01.200 --> 01:01:01.500\nGeneral Kenobi.\n\n',
      contentType: 'text/plain; charset=utf-8',
    });
  });

  it('verbose_json: segments unless granularities name only words; words when they name them', () => {
    const byDefault = openAiTranscript(whisper, { ...shape, format: 'verbose_json' }).body as Record<string, unknown>;
    expect(byDefault).toEqual({ task: 'transcribe', language: 'english', duration: 2.5, text: whisper.transcript, segments: transcriptSegments(whisper, 2.5), usage: { type: 'duration', seconds: 3 } });
    const words = openAiTranscript(whisper, { ...shape, format: 'verbose_json', granularities: ['word'] }).body as Record<string, unknown>;
    expect(words.words).toEqual([{ word: 'Hello', start: 0, end: 0.5 }, { word: 'there.', start: 0.5, end: 1 }]);
    expect(words).not.toHaveProperty('segments');
    const translated = openAiTranscript(plain, { ...shape, task: 'translate', format: 'verbose_json', granularities: ['segment', 'word'] }).body as Record<string, unknown>;
    expect(translated).toMatchObject({ task: 'translate', language: 'english', words: [], segments: [{ id: 0, start: 0, end: 2.5, text: 'Hello there.' }] });
  });

  it('keeps only segments with times and text, and has none for an empty transcript', () => {
    expect(transcriptSegments(whisper, 9).map((segment) => segment.id)).toEqual([0, 1]);
    expect(transcriptSegments({ ...plain, transcript: '' }, 9)).toEqual([]);
    expect(cueTimestamp(-1, ',')).toBe('00:00:00,000');
  });
});
