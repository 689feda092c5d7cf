import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, TranscriptionRequestDto, TranscriptionResultDto } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { TranscriptionService } from './transcription.service';

const EXAMPLE_RESULT = {
  metadata: { request_id: '0f8fad5b-d9cb-469f-a165-70867728950e', created: '2026-11-24T12:00:00.000Z', duration: 2, channels: 1, model: 'openai/whisper-1' },
  results: {
    channels: [
      {
        alternatives: [{ transcript: 'The quick brown fox jumps over the lazy dog.', words: [{ word: 'The', start: 0, end: 0.2 }] }],
        detected_language: 'english',
      },
    ],
  },
  meta: { usage: { credits_used: 400, usd_spent: 0.0002, audio_seconds: 2 } },
};

/** A short public recording (Deepgram's own sample), so the default example works as it is. */
const SAMPLE_AUDIO_URL = 'https://static.deepgram.com/examples/Bueller-Life-moves-pretty-fast.wav';

const TRANSCRIPTION_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'A bad field, or a URL the gateway refuses or cannot fetch',
    messages: {
      noUrl: `${ErrorMessages.bodyValidationPrefix} url: Expected a non-empty string. Received nothing`,
      refusedUrl: `${ErrorMessages.bodyValidationPrefix} url: names a loopback address, which the gateway does not fetch`,
    },
  },
  429: {
    description: "The key's rate or concurrency limit, the free plan's hourly limit, the upstream's own limit, or the key's requests holding their share of the fetched media the gateway may hold",
    messages: {
      ...MODEL_ENDPOINT_ERRORS[429].messages,
      mediaShare:
        "Too Many Requests: this API key's requests hold 128 MiB of fetched media, as much as one key may at once (MEDIA_IN_FLIGHT_KEY_SHARE); retry when one of them is over.",
    },
  },
  503: {
    description: 'No configured source of the model offers speech-to-text, an upstream cannot be reached, the gateway holds as much fetched media as it may, or keys cannot be verified (billing down)',
    messages: {
      noSource: "Service Unavailable: no source of model 'openai/whisper-1' offers speech-to-text (anthropic has no speech-to-text API).",
      unreachable: MODEL_ENDPOINT_ERRORS[503].messages.unreachable,
      billing: MODEL_ENDPOINT_ERRORS[503].messages.billing,
    },
  },
};

@ApiTags('speech-to-text')
@Controller()
export class TranscriptionController {
  constructor(private readonly transcription: TranscriptionService) {}

  @Post('stt')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: 'Speech to text: the gateway fetches the audio at `url` and transcribes it (Deepgram-style answer)',
    description:
      'Billed per second of audio (rounded up), never more than `max_duration_seconds` (default STT_MAX_AUDIO_SECONDS): that is the hold, and it must fit the balance before anything is fetched. Example body: `{"model": "whisper-1", "url": "https://example.com/audio/meeting.wav", "language": "en"}`.',
  })
  @ApiBody({
    type: TranscriptionRequestDto,
    examples: {
      whisper: { summary: 'Whisper, English', value: { model: 'whisper-1', url: SAMPLE_AUDIO_URL, language: 'en' } },
      deepgram: { summary: 'Deepgram Nova-3, a small hold', value: { model: 'nova-3', url: SAMPLE_AUDIO_URL, max_duration_seconds: 120, words: true } },
    },
  })
  @ApiOkResponse({ type: TranscriptionResultDto, example: EXAMPLE_RESULT })
  @ApiErrorResponses(TRANSCRIPTION_ERRORS)
  create(@Body() body: TranscriptionRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<TranscriptionResultDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.transcription.transcribe({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation });
  }
}
