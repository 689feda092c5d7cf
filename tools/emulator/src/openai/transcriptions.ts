// POST /v1/audio/transcriptions, as OpenAI answers it: a multipart form with the audio in
// `file`, `model`, and `response_format` json (default), text, srt, vtt or verbose_json
// (Whisper only: the GPT-4o transcribe models refuse it, as OpenAI does). What is heard:
// media/transcribe.ts. `json` carries `usage`: `{type: 'duration', seconds: ceil(duration)}`
// for Whisper, token usage for the others (input = 10 audio tokens a second, output = words);
// `verbose_json` adds `task`, `language`, `duration`, `segments` (one) and, with
// `timestamp_granularities[]=word`, `words`.
// POST /v1/audio/translations: the same form without `language` and `timestamp_granularities[]`
// (refused, as OpenAI refuses them), Whisper models only (others: 400, as OpenAI answers); the
// English text is what was heard (the emulator's speech is English), `task: 'translate'`.
import type { RequestContext } from '../context';
import { hear } from '../media/transcribe';
import { words as splitWords } from '../util';

const FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'];
const EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

function field(ctx: RequestContext, name: string): string | undefined {
  const body = ctx.body as Record<string, string | string[]> | undefined;
  const value = body?.[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
}

export function audioTranscriptions(ctx: RequestContext): void {
  answerAudio(ctx, 'transcribe');
}

export function audioTranslations(ctx: RequestContext): void {
  answerAudio(ctx, 'translate');
}

function answerAudio(ctx: RequestContext, task: 'transcribe' | 'translate'): void {
  if (!/^multipart\/form-data/i.test(ctx.req.headers['content-type'] ?? '')) {
    return ctx.error(400, "Invalid Content-Type header (expected multipart/form-data).");
  }
  const model = field(ctx, 'model');
  if (!model) return ctx.error(400, "Missing required parameter: 'model'.", { param: 'model' });
  const file = ctx.files.find((part) => part.field === 'file');
  if (!file) return ctx.error(400, "Missing required parameter: 'file'.", { param: 'file' });
  const extension = /\.([a-z0-9]+)$/i.exec(file.filename)?.[1]?.toLowerCase();
  if (!extension || !EXTENSIONS.includes(extension)) {
    return ctx.error(400, `Invalid file format. Supported formats: ${JSON.stringify(EXTENSIONS)}`, { param: 'file' });
  }
  const format = field(ctx, 'response_format') ?? 'json';
  if (!FORMATS.includes(format)) return ctx.error(400, `Invalid value for 'response_format': '${format}'.`, { param: 'response_format' });
  const whisper = model.startsWith('whisper');
  if (task === 'translate') {
    if (!whisper) return ctx.error(400, `Model '${model}' does not support translations. Use 'whisper-1'.`, { param: 'model' });
    for (const name of ['language', 'timestamp_granularities[]']) {
      if (field(ctx, name) !== undefined) return ctx.error(400, `Unrecognized request argument supplied: ${name}`, { param: name });
    }
  }
  if (!whisper && format !== 'json' && format !== 'text') {
    return ctx.error(400, `response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text' instead.`, { param: 'response_format' });
  }
  const heard = hear(file.data, ctx.controls.heardSeconds);
  if ('problem' in heard) return ctx.error(400, `Audio file might be corrupted or unsupported: ${heard.problem}.`, { param: 'file' });

  const usage = whisper
    ? { type: 'duration', seconds: Math.ceil(heard.seconds) }
    : (() => {
        const audioTokens = Math.ceil(heard.seconds * 10);
        const output = splitWords(heard.text).length;
        return { type: 'tokens', input_tokens: audioTokens, input_token_details: { text_tokens: 0, audio_tokens: audioTokens }, output_tokens: output, total_tokens: audioTokens + output };
      })();
  switch (format) {
    case 'text':
      return ctx.send(200, `${heard.text}\n`, 'text/plain; charset=utf-8');
    case 'srt':
      return ctx.send(200, `1\n${timestamp(0, ',')} --> ${timestamp(heard.seconds, ',')}\n${heard.text}\n\n`, 'text/plain; charset=utf-8');
    case 'vtt':
      return ctx.send(200, `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(heard.seconds, '.')}\n${heard.text}\n\n`, 'text/plain; charset=utf-8');
    case 'verbose_json': {
      const granularities = (ctx.body as Record<string, string | string[]>)['timestamp_granularities[]'];
      const wantsWords = Array.isArray(granularities) ? granularities.includes('word') : granularities === 'word';
      const segment = { id: 0, seek: 0, start: 0, end: heard.seconds, text: ` ${heard.text}`, tokens: [], temperature: 0, avg_logprob: -0.1, compression_ratio: 1, no_speech_prob: 0.01 };
      return ctx.json(200, {
        task,
        language: task === 'translate' ? 'english' : languageName(field(ctx, 'language')),
        duration: heard.seconds,
        text: heard.text,
        ...(wantsWords ? { words: heard.words } : {}),
        segments: [segment],
        usage,
      });
    }
    default:
      return ctx.json(200, ctx.controls.noUsage ? { text: heard.text } : { text: heard.text, usage });
  }
}

function timestamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

const LANGUAGES: Record<string, string> = { en: 'english', fr: 'french', de: 'german', es: 'spanish', it: 'italian', ja: 'japanese' };

function languageName(code: string | undefined): string {
  return (code && LANGUAGES[code]) ?? 'english';
}
