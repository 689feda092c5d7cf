import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorBodyDto, TranscriptionRequestDto, TranscriptionResultDto } from '@igw/contracts';
import { RequireApiKey } from '@igw/platform';
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
      'Billed per second of audio (rounded up). The hold is `max_duration_seconds` (default STT_MAX_AUDIO_SECONDS) of audio and must fit the balance before anything is fetched. Example body: `{"model": "whisper-1", "url": "https://example.com/audio/meeting.wav", "language": "en"}`.',
  })
  @ApiBody({
    type: TranscriptionRequestDto,
    examples: {
      whisper: { summary: 'Whisper, English', value: { model: 'whisper-1', url: 'https://example.com/audio/meeting.wav', language: 'en' } },
      deepgram: { summary: 'Deepgram Nova-3, a small hold', value: { model: 'nova-3', url: 'https://example.com/audio/call.mp3', max_duration_seconds: 120, words: true } },
    },
  })
  @ApiOkResponse({ type: TranscriptionResultDto, example: EXAMPLE_RESULT })
  @ApiBadRequestResponse({ type: ErrorBodyDto, description: 'A bad field, or a URL the gateway refuses or cannot fetch (`Body validation error! url: ...`)' })
  @ApiForbiddenResponse({ type: ErrorBodyDto, description: 'Not enough credits for max_duration_seconds of audio' })
  @ApiNotFoundResponse({ type: ErrorBodyDto, description: 'Unknown model' })
  create(@Body() body: TranscriptionRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<TranscriptionResultDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.transcription.transcribe({ requestId: request.context.requestId, auth: request.context.auth!, body, signal: cancellation });
  }
}
