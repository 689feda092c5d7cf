import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, MULTIPART_NUMBER_FIELDS, OpenAiSpeechRequestDto, OpenAiTranscriptionFormDto } from '@igw/contracts';
import { ApiErrorResponses, GatewayException, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { costHeaders } from './media-routing';
import { AcceptsUpload, type UploadPolicy } from './multipart-upload';
import { openAiTranscript } from './openai-transcript';
import { SpeechService } from './speech.service';
import { TranscriptionService } from './transcription.service';

/** The audio file of a transcription or translation form: one, in `file`. */
const AUDIO_FORM: UploadPolicy = { files: [{ name: 'file', maxCount: 1 }], numberFields: MULTIPART_NUMBER_FIELDS.transcription };

const COST_HEADERS = {
  'x-credits-used': { description: 'Credits charged', schema: { type: 'number', example: 400 } },
  'x-usd-spent': { description: 'USD charged', schema: { type: 'number', example: 0.0002 } },
  'x-request-id': { description: 'The request id (the ledger key)', schema: { type: 'string' } },
};

const SPEECH_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: {
      noInput: `${ErrorMessages.bodyValidationPrefix} input: Expected a non-empty string. Received nothing`,
      sse: `${ErrorMessages.bodyValidationPrefix} stream_format: Expected 'audio' (the audio bytes in the answer): speech as server-sent events ('sse') is not served. Received 'sse'`,
    },
  },
};

const UPLOAD_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'A bad field, no `file`, a body that is not a multipart form, an upload cut short, audio longer than STT_MAX_AUDIO_SECONDS, or (translations) a model that cannot translate',
    messages: {
      noFile: `${ErrorMessages.bodyValidationPrefix} file: Expected an audio file in the form's file field. Received nothing`,
      format: `${ErrorMessages.bodyValidationPrefix} response_format: Expected one of 'json', 'text', 'srt', 'vtt', 'verbose_json'. Received 'xml'`,
      cannotTranslate: `${ErrorMessages.bodyValidationPrefix} model: 'test/nova' cannot translate speech: Deepgram has no translation API (nova-3 transcribes only). Translations are served by Whisper models on OpenAI-format sources.`,
    },
  },
  413: { description: 'The uploaded file is larger than MEDIA_FETCH_MAX_BYTES (nothing is sent upstream, nothing billed)', messages: "Payload Too Large: the uploaded files are larger than the gateway's limit of 25 MiB (MEDIA_FETCH_MAX_BYTES)." },
  429: {
    description: "The key's rate or concurrency limit, the upstream's own limit, or the key's requests holding their share of the media the gateway may hold",
    messages: MODEL_ENDPOINT_ERRORS[429].messages,
  },
};

const TRANSCRIPT_EXAMPLES = {
  json: { summary: 'json (default)', value: { text: 'The quick brown fox jumps over the lazy dog.', usage: { type: 'duration', seconds: 2 } } },
  verbose: {
    summary: 'verbose_json',
    value: { task: 'transcribe', language: 'english', duration: 2, text: 'The quick brown fox jumps over the lazy dog.', segments: [{ id: 0, start: 0, end: 2, text: ' The quick brown fox jumps over the lazy dog.' }], usage: { type: 'duration', seconds: 2 } },
  },
};

/**
 * OpenAI's audio routes, for its SDKs (`client.audio.speech.create`, `.transcriptions.create`,
 * `.translations.create`) with the chat base URL: the same models, sources and billing as
 * /tts and /stt, in OpenAI's bodies and answers.
 */
@ApiTags('audio (OpenAI)')
@Controller('v1/audio')
export class OpenAiAudioController {
  constructor(
    private readonly speech: SpeechService,
    private readonly transcription: TranscriptionService,
  ) {}

  @Post('speech')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: "Text to speech in OpenAI's shape: the answer body is the audio (mp3 unless response_format says otherwise)",
    description: 'Billed as POST /tts bills the same text: per character (Unicode code point) of `input`. `instructions` reach OpenAI-format sources only (elsewhere a 400).',
  })
  @ApiBody({
    type: OpenAiSpeechRequestDto,
    examples: {
      mp3: { summary: 'MP3 (the default)', value: { model: 'tts-1', input: 'Hello! Your order has shipped.', voice: 'alloy' } },
      wav: { summary: 'WAV, faster', value: { model: 'tts-1', input: 'Hello again.', voice: 'nova', response_format: 'wav', speed: 1.25 } },
    },
  })
  @ApiProduces('audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/flac', 'audio/aac', 'audio/pcm', 'application/json')
  @ApiOkResponse({ description: 'The audio bytes', schema: { type: 'string', format: 'binary' }, headers: { ...COST_HEADERS, 'x-characters': { description: 'Characters billed', schema: { type: 'integer' } } } })
  @ApiErrorResponses(SPEECH_ERRORS)
  async createSpeech(@Body() body: OpenAiSpeechRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<StreamableFile> {
    const answer = await this.speech.synthesizeOpenAi(this.callOf(request, response), body);
    response.set({ ...costHeaders(answer.usage), 'x-characters': String(answer.characters), 'x-model': answer.model });
    return new StreamableFile(answer.audio, { type: answer.contentType, length: answer.audio.length });
  }

  @Post('transcriptions')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @AcceptsUpload(AUDIO_FORM)
  @ApiOperation({
    summary: "Speech to text of an uploaded file, in OpenAI's shape (json, text, srt, vtt, verbose_json)",
    description:
      'The file (at most MEDIA_FETCH_MAX_BYTES) is billed as POST /stt bills a fetched one: per second of audio, its length read from its bytes (WAV, MP3, Ogg, M4A, FLAC, WebM), held up to STT_MAX_AUDIO_SECONDS; every format on every speech-to-text model. The cost is in the x-credits-used and x-usd-spent headers.',
  })
  @ApiBody({ type: OpenAiTranscriptionFormDto })
  @ApiProduces('application/json', 'text/plain')
  @ApiOkResponse({ description: 'The transcript in the response_format asked for (text, srt and vtt as text/plain)', headers: COST_HEADERS, content: { 'application/json': { examples: TRANSCRIPT_EXAMPLES } } })
  @ApiErrorResponses(UPLOAD_ERRORS)
  createTranscription(@Body() body: OpenAiTranscriptionFormDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<string | Record<string, unknown>> {
    return this.transcribe('transcribe', body, request, response);
  }

  @Post('translations')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @AcceptsUpload(AUDIO_FORM)
  @ApiOperation({
    summary: "Speech in any language to English text, in OpenAI's shape",
    description: 'On models whose source translates (Whisper on OpenAI-format sources); any other is a 400 naming the model. Billed as transcriptions are.',
  })
  @ApiBody({ type: OpenAiTranscriptionFormDto })
  @ApiProduces('application/json', 'text/plain')
  @ApiOkResponse({ description: 'The English text in the response_format asked for', headers: COST_HEADERS, content: { 'application/json': { examples: TRANSCRIPT_EXAMPLES } } })
  @ApiErrorResponses(UPLOAD_ERRORS)
  createTranslation(@Body() body: OpenAiTranscriptionFormDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<string | Record<string, unknown>> {
    return this.transcribe('translate', body, request, response);
  }

  private async transcribe(task: 'transcribe' | 'translate', body: OpenAiTranscriptionFormDto, request: Request, response: Response): Promise<string | Record<string, unknown>> {
    const file = request.uploads?.file?.[0];
    if (!file || file.bytes.length === 0) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} file: Expected an audio file in the form's file field. Received ${file ? 'an empty file' : 'nothing'}`);
    }
    const granularities = body.timestamp_granularities === undefined ? undefined : [body.timestamp_granularities].flat();
    if (task === 'translate' && body.language !== undefined) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} language: translations take no language (their text is English); leave it out.`);
    }
    const done = await this.transcription.transcribeUpload(this.callOf(request, response), {
      model: body.model,
      provider: body.provider,
      file,
      task,
      request: { language: body.language, prompt: body.prompt, temperature: body.temperature, words: granularities === undefined ? false : granularities.includes('word') },
    });
    const answer = openAiTranscript(done.result, { format: body.response_format ?? 'json', task, granularities, duration: done.duration, billedSeconds: done.usage.audio_seconds });
    response.set({ ...costHeaders(done.usage), 'x-model': done.model, 'content-type': answer.contentType });
    return answer.body;
  }

  /** A client that goes away aborts the upstream call, unless it was already sent (upstream-billing.ts). */
  private callOf(request: Request, response: Response) {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return { requestId: request.context.requestId, context: request.context, auth: request.context.auth!, signal: cancellation };
  }
}
