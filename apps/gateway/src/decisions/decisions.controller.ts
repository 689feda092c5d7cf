import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiExtraModels, ApiGatewayTimeoutResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { DecisionRequestDto, DecisionResultDto, ErrorBodyDto, JevDecisionRequestDto, LunaDecisionRequestDto } from '@igw/contracts';
import { RequireApiKey } from '@igw/platform';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { DecisionsService } from './decisions.service';

@ApiTags('decisions')
@ApiExtraModels(JevDecisionRequestDto, LunaDecisionRequestDto)
@Controller()
export class DecisionsController {
  constructor(private readonly decisions: DecisionsService) {}

  @Post('v1/decisions')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: 'Ask a decision model typed questions about content; billed by input tokens only',
    description:
      'Two request shapes, by model: the Jev shape (typesafe/jev, typesafe/jev-1.14, typesafe/jev-1.13, liquid/d1) and the Luna shape (openai/gpt-6-luna). A body in the other shape is a 400 naming the right one. ' +
      '`box` questions are experimental and answered only by typesafe/jev-1.14 (and typesafe/jev while it resolves to it). ' +
      'Models answering through the chat-logprobs fallback report the model\'s own next-token probabilities over the answer labels, renormalised: not trained calibration.',
  })
  @ApiBody({
    schema: { oneOf: [{ $ref: getSchemaPath(JevDecisionRequestDto) }, { $ref: getSchemaPath(LunaDecisionRequestDto) }] },
    examples: {
      jev: {
        summary: 'Jev shape (typesafe/jev)',
        value: {
          model: 'typesafe/jev',
          state: 'Customer email: "I was charged twice for order 4411, please refund one today."',
          questions: {
            is_complaint: { type: 'noul', instructions: 'Is the customer complaining?' },
            topic: { type: 'choice', instructions: 'What is the email about?', criteria: { billing: 'payments and refunds', shipping: 'delivery', other: 'anything else' } },
            urgency: { type: 'score', instructions: 'How urgent is it?', criteria: ['can wait', 'this week', 'today'] },
          },
        },
      },
      luna: {
        summary: 'Luna shape (openai/gpt-6-luna)',
        value: {
          model: 'openai/gpt-6-luna',
          input: 'I was charged twice for order 4411, please refund one today.',
          questions: [
            { name: 'is_complaint', type: 'predicate', instructions: 'Is the customer complaining?' },
            { name: 'topic', type: 'choice', choices: [{ value: 'billing' }, { value: 'shipping' }, { value: 'other' }] },
            { name: 'urgency', type: 'score', levels: [{ label: 'low' }, { label: 'medium' }, { label: 'high' }] },
          ],
        },
      },
    },
  })
  @ApiOkResponse({ type: DecisionResultDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto, description: 'Invalid body, a body in the other shape, box on a model without it, or audio/video assets' })
  @ApiNotFoundResponse({ type: ErrorBodyDto, description: 'Unknown model' })
  @ApiGatewayTimeoutResponse({ type: ErrorBodyDto, description: 'The decisions service did not answer in time (DECISIONS_TIMEOUT_MS)' })
  decide(@Body() body: DecisionRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<DecisionResultDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.decisions.decide({ requestId: request.context.requestId, auth: request.context.auth!, body, signal: cancellation });
  }
}
