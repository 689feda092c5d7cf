import type { ServerResponse } from 'node:http';
import { Controller, HttpStatus, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ChatCompletionDto, ChatCompletionRequestDto, ErrorMessages } from '@igw/contracts';
import { JsonSource } from '@igw/json';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, GatewayException, PathId, RequireApiKey, readBodyOf, type DirectRequest, DirectRoute } from '@igw/http';
import { ChatBody } from './chat-body.decorator';
import type { Request, Response } from 'express';
import { respondToChat } from './chat-responder';
import { ChatService } from './chat.service';
import { AzureChatCompletionRequestDto } from './dto/azure-chat-request.dto';

const HELLO = [{ role: 'user', content: 'Say hello in five words.' }];

/** The first is Try it out's default: a request that succeeds as it is, with no optional field. */
const CHAT_EXAMPLES = {
  hello: { summary: 'A short chat (the smallest request)', value: { model: 'gpt-4o-mini', messages: HELLO } },
  streaming: {
    summary: 'Streamed, with the usage in the last chunk (text/event-stream)',
    value: { model: 'gpt-4o-mini', messages: HELLO, stream: true, stream_options: { include_usage: true } },
  },
  tools: {
    summary: 'A tool the model may call',
    value: {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The current weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
    },
  },
  settings: {
    summary: 'A system message, a token limit and a temperature',
    value: { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You answer in one sentence.' }, ...HELLO], max_tokens: 50, temperature: 0.2 },
  },
};

const AZURE_CHAT_EXAMPLES = {
  hello: { summary: 'A short chat (the deployment in the path is the model)', value: { messages: HELLO } },
  streaming: { summary: 'Streamed, with the usage in the last chunk', value: { messages: HELLO, stream: true, stream_options: { include_usage: true } } },
};

const CHAT_ANSWER = {
  id: 'chatcmpl-0f8fad5bd9cb469fa16570867728950e',
  object: 'chat.completion',
  created: 1764000000,
  model: 'openai/gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, nice to meet!', refusal: null }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 13, completion_tokens: 7, total_tokens: 20 },
  meta: { usage: { credits_used: 12.3, usd_spent: 0.00000615 } },
};

const CHAT_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: {
      noMessages: `${ErrorMessages.bodyValidationPrefix} messages: Expected a non-empty array of messages. Received nothing`,
      streamOptions: `${ErrorMessages.bodyValidationPrefix} stream_options: Expected stream: true alongside stream_options. Received no stream`,
    },
  },
};

@ApiTags('chat')
@Controller()
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @DirectRoute()
  @Post(['v1/chat/completions', 'chat/completions'])
  @RequireApiKey()
  @ApiOperation({ summary: 'Create a chat completion (stream: true answers text/event-stream)' })
  @ApiBody({ type: ChatCompletionRequestDto, examples: CHAT_EXAMPLES })
  @ApiOkResponse({ type: ChatCompletionDto, example: CHAT_ANSWER, description: 'The completion (with stream: true, text/event-stream chunks instead)' })
  @ApiErrorResponses(CHAT_ERRORS)
  async create(@ChatBody() body: ChatCompletionRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    // A long conversation goes upstream as the client wrote it when nothing in it changed (JsonBodyGuard kept the body as read, on either path).
    const source = readBodyOf(request);
    await respondToChat(this.chat, body, request, response, source && JsonSource.ofMember(source, 'messages'));
  }

  /**
   * The Azure OpenAI flow: the deployment in the path is a catalogue id or alias (slashes
   * allowed), the key in `Api-Key` (Bearer works too), and any `model` in the body is ignored.
   */
  @Post('openai/deployments/*deployment/chat/completions')
  @RequireApiKey({ credits: true, apiKeyHeader: true })
  @ApiOperation({ summary: 'Azure-style chat completion; point the AzureOpenAI client at the gateway base address' })
  @ApiParam({ name: 'deployment', description: 'A catalogue model id or alias', example: 'gpt-4o-mini' })
  @ApiQuery({ name: 'api-version', required: true, description: 'Supplied by the client', example: '2024-10-21' })
  @ApiBody({ type: AzureChatCompletionRequestDto, examples: AZURE_CHAT_EXAMPLES })
  @ApiOkResponse({ type: ChatCompletionDto, example: CHAT_ANSWER, description: 'The completion (with stream: true, text/event-stream chunks instead)' })
  @ApiErrorResponses(CHAT_ERRORS)
  async createForDeployment(
    @PathId('deployment') deployment: string,
    @Query('api-version') apiVersion: string | undefined,
    @ChatBody({ azure: true }) body: AzureChatCompletionRequestDto,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    if (!apiVersion || typeof apiVersion !== 'string') {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} api-version: the query parameter api-version is required on the Azure-style path.`);
    }
    await respondToChat(this.chat, { ...body, model: deployment } as ChatCompletionRequestDto, request, response);
  }
}
