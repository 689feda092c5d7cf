import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CompletionRequestDto, ErrorMessages } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey, sendJson } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { sendEventStream } from '../chat/chat-responder';
import { CompletionsService } from './completions.service';

/** The first is Try it out's default: a request that succeeds as it is. */
const COMPLETION_EXAMPLES = {
  text: { summary: 'Complete a prompt', value: { model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test.', max_tokens: 16 } },
  fim: { summary: 'Fill in the middle (suffix)', value: { model: 'gpt-3.5-turbo-instruct', prompt: 'def add(a, b):\n    ', suffix: '\n\nprint(add(1, 2))', max_tokens: 32, temperature: 0 } },
  streaming: { summary: 'Streamed, with the usage at the end', value: { model: 'gpt-3.5-turbo-instruct', prompt: 'Once upon a time', max_tokens: 32, stream: true, stream_options: { include_usage: true } } },
};

const COMPLETION_ANSWER = {
  id: 'cmpl-0f8fad5bd9cb469fa16570867728950e',
  object: 'text_completion',
  created: 1764669600,
  model: 'openai/gpt-3.5-turbo-instruct',
  choices: [{ text: '\n\nThis is indeed a test.', index: 0, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 6, completion_tokens: 7, total_tokens: 13 },
  meta: { usage: { credits_used: 2.3, usd_spent: 0.0000229 } },
};

const COMPLETION_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body (the message names the first wrong field), or a model none of whose sources serves legacy completions',
    messages: {
      badField: `${ErrorMessages.bodyValidationPrefix} best_of: Expected at least n (2): best_of completions are generated and the best n answered. Received 1`,
      notServed: `${ErrorMessages.bodyValidationPrefix} model: 'openai/gpt-4o-mini' is not served by POST /v1/completions: none of its sources serves the legacy completions API. Send it to POST /v1/chat/completions (or /v1/responses) with the prompt as a user message.`,
    },
  },
};

/**
 * OpenAI's legacy text completions (what code-completion tools still use for fill-in-the-middle)
 * on the models whose sources serve them: passed to the source as they came, answered as it
 * answers, through the paid-request pipeline.
 */
@ApiTags('completions')
@Controller()
export class CompletionsController {
  constructor(private readonly completions: CompletionsService) {}

  @Post(['v1/completions', 'completions'])
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: "Create a text completion, OpenAI's legacy completions API (stream: true answers text_completion chunks, then data: [DONE])",
    description:
      'On models whose sources serve it: `<family>/completions` models (gpt-3.5-turbo-instruct) and chat models with a source the catalogue marks `native: [completions]` (an OpenAI-format server such as vLLM). Any other model is a 400 that names the route to use instead. Billed by the upstream\'s usage (else a tokenizer count); the hold covers every completion generated (prompts × the larger of n and best_of) at max_tokens, else the model\'s output limit.',
  })
  @ApiBody({ type: CompletionRequestDto, examples: COMPLETION_EXAMPLES })
  @ApiOkResponse({ example: COMPLETION_ANSWER, description: 'The completion (with stream: true, text/event-stream chunks instead)' })
  @ApiErrorResponses(COMPLETION_ERRORS)
  async create(@Body() body: CompletionRequestDto, @Req() request: Request, @Res() response: Response): Promise<void> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    const call = { requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, bodyBytes: request.context.bodyBytes ?? 0, signal: cancellation };
    if (body.stream !== true) {
      await this.completions.complete(call, (answer) => sendJson(response, 200, answer));
      return;
    }
    await sendEventStream(await this.completions.openStream(call), response, cancellation);
  }
}
