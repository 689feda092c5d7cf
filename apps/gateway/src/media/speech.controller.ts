import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, SpeechRequestDto } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { costHeaders } from './media-routing';
import { SpeechService } from './speech.service';

const SPEECH_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: { description: 'An invalid body: the message names the first wrong field', messages: `${ErrorMessages.bodyValidationPrefix} text: Expected a non-empty string. Received nothing` },
  503: {
    description: 'No configured source of the model offers text-to-speech, an upstream cannot be reached, or keys cannot be verified (billing down)',
    messages: {
      noSource: "Service Unavailable: no source of model 'openai/tts-1' offers text-to-speech (anthropic has no text-to-speech API).",
      unreachable: MODEL_ENDPOINT_ERRORS[503].messages.unreachable,
      billing: MODEL_ENDPOINT_ERRORS[503].messages.billing,
    },
  },
};

@ApiTags('text-to-speech')
@Controller()
export class SpeechController {
  constructor(private readonly speech: SpeechService) {}

  @Post('tts')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: 'Text to speech: the answer body is the audio (WAV unless format says otherwise), its cost in headers',
    description:
      'Billed per character (Unicode code point) of `text` at the catalogue price; the credit hold is that exact cost. Example: `{"model": "tts-1", "text": "Hello!", "voice": "alloy", "format": "mp3"}` answers `audio/mpeg` bytes.',
  })
  @ApiBody({
    type: SpeechRequestDto,
    examples: {
      wav: { summary: 'WAV (the default)', value: { model: 'tts-1', text: 'Hello! Your order has shipped.' } },
      mp3: { summary: 'MP3, another voice, faster', value: { model: 'tts-1-hd', text: 'Hello again.', voice: 'nova', format: 'mp3', speed: 1.25 } },
      deepgram: { summary: 'Deepgram Aura-2', value: { model: 'aura-2', text: 'Thanks for calling.', voice: 'orion', encoding: 'wav' } },
    },
  })
  @ApiProduces('audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/flac', 'audio/aac', 'audio/pcm', 'application/json')
  @ApiOkResponse({
    description: 'The audio bytes',
    schema: { type: 'string', format: 'binary' },
    headers: {
      'content-type': { description: 'The audio type, e.g. audio/wav', schema: { type: 'string' } },
      'x-credits-used': { description: 'Credits charged (as meta.usage.credits_used elsewhere)', schema: { type: 'number', example: 0.6 } },
      'x-usd-spent': { description: 'USD charged', schema: { type: 'number', example: 0.0000003 } },
      'x-characters': { description: 'Characters billed', schema: { type: 'integer', example: 20 } },
      'x-model': { description: 'The catalogue id of the model', schema: { type: 'string', example: 'openai/tts-1' } },
      'x-request-id': { description: 'The request id (the ledger key)', schema: { type: 'string' } },
    },
  })
  @ApiErrorResponses(SPEECH_ERRORS)
  async create(@Body() body: SpeechRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<StreamableFile> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    const answer = await this.speech.synthesize({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation });
    response.set({ ...costHeaders(answer.usage), 'x-characters': String(answer.characters), 'x-model': answer.model });
    return new StreamableFile(answer.audio, { type: answer.contentType, length: answer.audio.length });
  }
}
