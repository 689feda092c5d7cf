// Deepgram wire format: `Authorization: Token <key>` (Bearer accepted too), the model in the
// query string, errors as `{err_code, err_msg, request_id}`.
//   POST /v1/listen?model=nova-3[&smart_format=true&punctuate=true&language=..]
//        body: the audio bytes (any audio/* or application/octet-stream type). What is heard:
//        ../media/transcribe.ts. Answers `{metadata: {request_id, sha256, created, duration,
//        channels: 1, models, model_info}, results: {channels: [{alternatives: [{transcript,
//        confidence: 0.99, words: [{word, start, end, confidence, punctuated_word}]}]}]}}`; the
//        transcript keeps its punctuation and case with smart_format or punctuate, else it is
//        lower-case words. A JSON body `{url}` (Deepgram fetches remote audio) is refused: the
//        emulator does not fetch.
//   POST /v1/speak?model=aura-2-thalia-en&encoding=linear16&container=wav[&sample_rate=N]
//        body `{text}` (at most 2000 characters). Answers the audio bytes: linear16 in a wav
//        container (the default when encoding is linear16) is a valid WAV carrying the text
//        (../media/wav.ts); container=none is raw samples; mp3 (the default encoding), opus,
//        flac, aac, mulaw, alaw are `EMULATED <encoding> AUDIO\n` + samples. Headers
//        `dg-model-name`, `dg-char-count`, `dg-request-id`.
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestContext } from '../context';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import { bareWord, hear } from '../media/transcribe';
import { SPEECH_SAMPLE_RATE } from '../media/wav';
import { spokenAudio } from '../openai/speech';
import { isRecord } from '../util';

export const MAX_SPEAK_CHARACTERS = 2000;
const ENCODING_TYPES: Record<string, string> = {
  linear16: 'audio/wav',
  mulaw: 'audio/wav',
  alaw: 'audio/wav',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  aac: 'audio/aac',
};

function errorCode(status: number): string {
  if (status === 401) return 'INVALID_AUTH';
  if (status === 402) return 'ASR_PAYMENT_REQUIRED';
  if (status === 403) return 'INSUFFICIENT_PERMISSIONS';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'TOO_MANY_REQUESTS';
  if (status >= 500) return 'INTERNAL_SERVER_ERROR';
  return 'Bad Request';
}

function listen(ctx: RequestContext): void {
  if (/^application\/json/i.test(ctx.req.headers['content-type'] ?? '')) {
    return ctx.error(400, 'Bad Request: the emulator does not fetch remote audio; send the audio bytes as the body.');
  }
  const heard = hear(ctx.rawBody, ctx.controls.heardSeconds);
  if ('problem' in heard) return ctx.error(400, `Bad Request: failed to process audio: corrupt or unsupported data (${heard.problem}).`);
  const model = ctx.query.get('model') || 'base';
  const formatted = ctx.query.get('smart_format') === 'true' || ctx.query.get('punctuate') === 'true';
  const modelId = randomUUID();
  const words = heard.words.map((word) => ({ word: bareWord(word.word), start: word.start, end: word.end, confidence: 0.99, punctuated_word: word.word }));
  ctx.json(200, {
    metadata: {
      transaction_key: 'deprecated',
      request_id: randomUUID(),
      sha256: createHash('sha256').update(ctx.rawBody ?? Buffer.alloc(0)).digest('hex'),
      created: new Date().toISOString(),
      duration: heard.seconds,
      channels: 1,
      models: [modelId],
      model_info: { [modelId]: { name: `general-${model}`, version: '2025-01-01.0', arch: model } },
    },
    results: {
      channels: [
        {
          alternatives: [
            { transcript: formatted ? heard.text : words.map((word) => word.word).join(' '), confidence: 0.99, words },
          ],
        },
      ],
    },
  });
}

function speak(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body) || typeof body.text !== 'string' || body.text.trim() === '') return ctx.error(400, 'Bad Request: the body must be JSON with a non-empty `text`.');
  const characters = [...body.text].length;
  if (characters > MAX_SPEAK_CHARACTERS) return ctx.error(413, `Text exceeds the maximum of ${MAX_SPEAK_CHARACTERS} characters (got ${characters}).`);
  const model = ctx.query.get('model') || 'aura-asteria-en';
  const encoding = ctx.query.get('encoding') ?? 'mp3';
  if (!(encoding in ENCODING_TYPES)) return ctx.error(400, `Bad Request: unsupported encoding '${encoding}'.`);
  const container = ctx.query.get('container') ?? (encoding === 'linear16' || encoding === 'mulaw' || encoding === 'alaw' ? 'wav' : encoding === 'opus' ? 'ogg' : 'none');
  const sampleRate = Number(ctx.query.get('sample_rate') ?? SPEECH_SAMPLE_RATE);
  if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48000) return ctx.error(400, 'Bad Request: sample_rate must be an integer from 8000 to 48000.');
  const raw = encoding === 'linear16' && container === 'none';
  const format = raw ? 'pcm' : encoding === 'linear16' && container === 'wav' ? 'wav' : encoding;
  const audio = spokenAudio(body.text, format, sampleRate);
  ctx.send(200, audio, raw ? 'application/octet-stream' : ENCODING_TYPES[encoding], {
    'dg-model-name': model,
    'dg-char-count': String(characters),
    'dg-request-id': randomUUID(),
  });
}

export const deepgramFormat: WireFormat = {
  name: 'deepgram',
  routes: [
    { method: 'POST', path: '/v1/listen', handle: listen },
    { method: 'POST', path: '/v1/speak', handle: speak },
  ],
  ownsPath: (path) => path === '/v1/listen' || path === '/v1/speak',
  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers.authorization;
    if (header === undefined) return undefined;
    const match = /^(?:token|bearer)\s+(.+)$/i.exec(header);
    return match ? match[1].trim() : undefined;
  },
  errorBody: (status: number, message: string) => ({ err_code: errorCode(status), err_msg: message, request_id: randomUUID() }),
  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: `Not Found: ${failure.method} ${failure.path}` };
      case 'invalid_json':
        return { status: 400, message: 'Bad Request: the body is not valid JSON.' };
      case 'body_too_large':
        return { status: 413, message: `Payload Too Large: the limit is ${failure.limitBytes} bytes.` };
      case 'missing_api_key':
      case 'invalid_api_key':
        return { status: 401, message: 'Invalid credentials.' };
      case 'emulated':
        return { status: failure.status, message: `Emulated error: HTTP ${failure.status} requested by ${failure.source === 'model' ? 'the model name (@status=)' : 'x-emulator-status'}.` };
      case 'internal':
        return { status: 500, message: 'The emulator failed to process the request.' };
    }
  },
};
