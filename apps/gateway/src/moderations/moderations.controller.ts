import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, ModerationListDto, ModerationRequestDto } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { ModerationsService } from './moderations.service';

/** The first is Try it out's default: a request that succeeds as it is. */
const MODERATION_EXAMPLES = {
  one: { summary: 'One text', value: { model: 'omni-moderation-latest', input: 'I want to hug my cat.' } },
  several: { summary: 'Several texts, one result each', value: { model: 'text-moderation-latest', input: ['Have a nice day.', 'Another message.'] } },
  image: {
    summary: 'Text and an image (omni-moderation)',
    value: { model: 'omni-moderation-latest', input: [{ type: 'text', text: 'Is this picture fine?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] },
  },
};

const MODERATION_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: `${ErrorMessages.bodyValidationPrefix} input: Expected a non-empty string, a non-empty array (at most 2048) of strings, or a non-empty array of parts {type: 'text', text} and {type: 'image_url', image_url: {url}}. Received nothing`,
  },
};

@ApiTags('moderations')
@Controller()
export class ModerationsController {
  constructor(private readonly moderations: ModerationsService) {}

  @Post(['v1/moderations', 'moderations'])
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: "Classify text (and images) as OpenAI's moderation API does: one result per input",
    description: 'On the catalogue\'s moderation models (omni-moderation-latest, the default, and text-moderation-latest), through their sources that serve the moderation API. Billed by the input texts\' tokens at the catalogue price (0 for OpenAI\'s: the request is still journalled in the ledger).',
  })
  @ApiBody({ type: ModerationRequestDto, examples: MODERATION_EXAMPLES })
  @ApiOkResponse({ type: ModerationListDto })
  @ApiErrorResponses(MODERATION_ERRORS)
  create(@Body() body: ModerationRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<ModerationListDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.moderations.moderate({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation });
  }
}
