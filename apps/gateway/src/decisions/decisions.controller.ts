import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { DecisionRequestDto, DecisionResultDto, ErrorMessages, JevDecisionRequestDto, LunaDecisionRequestDto } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { DecisionsService } from './decisions.service';

const DECISION_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body, a body in the other shape, box on a model without it, or audio/video assets',
    messages: {
      noQuestions: `${ErrorMessages.bodyValidationPrefix} questions: Expected an object of named questions (Jev models) or an array of named questions (openai/gpt-6-luna). Received nothing`,
      otherShape: `${ErrorMessages.bodyValidationPrefix} state: openai/gpt-6-luna takes the Luna shape: \`input\` (a string or user messages), and \`questions\` as an array of named questions (predicate, choice, score).`,
    },
  },
  502: { description: 'The decisions service failed', messages: 'Bad Gateway: the decisions service failed to answer.' },
  503: {
    description: 'No source of the model offers decisions, or keys cannot be verified (billing down)',
    messages: {
      noSource: "Service Unavailable: no source of model 'typesafe/jev-1.14' offers a decisions API (groq has none).",
      billing: MODEL_ENDPOINT_ERRORS[503].messages.billing,
    },
  },
  504: { description: 'The decisions service did not answer in time (DECISIONS_TIMEOUT_MS)', messages: 'Gateway Timeout: the decisions service did not answer within 300000 ms.' },
};

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
  @ApiErrorResponses(DECISION_ERRORS)
  decide(@Body() body: DecisionRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<DecisionResultDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.decisions.decide({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation });
  }
}
