import type { ServerResponse } from 'node:http';
import { Body, Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, MessagesCountTokensRequestDto, MessagesRequestDto } from '@igw/contracts';
import { API_KEY_ERRORS, MODEL_ENDPOINT_ERRORS, RequireApiKey, type DirectRequest, DirectRoute } from '@igw/http';
import { respondToChat } from '../chat/chat-responder';
import { ChatService } from '../chat/chat.service';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { countPromptTokens } from '../tokens/prompt-token-count';
import { MessagesErrorFilter, MessagesErrorResponses } from './messages-errors';
import { promptOf } from './messages-request';
import { messagesFrontOf } from './messages-native';

const HELLO = [{ role: 'user', content: 'Say hello in five words.' }];

/** The first is Try it out's default: a request that succeeds as it is. */
const MESSAGES_EXAMPLES = {
  hello: { summary: 'A short message (any chat model of the catalogue)', value: { model: 'gpt-4o-mini', max_tokens: 100, messages: HELLO } },
  streaming: { summary: "Streamed as Anthropic's events (text/event-stream)", value: { model: 'gpt-4o-mini', max_tokens: 100, messages: HELLO, stream: true } },
  system: {
    summary: 'A system prompt in blocks, with prompt caching',
    value: { model: 'gpt-4o-mini', max_tokens: 100, system: [{ type: 'text', text: 'You answer in one sentence.', cache_control: { type: 'ephemeral' } }], messages: HELLO },
  },
  tools: {
    summary: 'A tool the model may call',
    value: {
      model: 'gpt-4o-mini',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [{ name: 'get_weather', description: 'The current weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    },
  },
};

const MESSAGE_ANSWER = {
  id: 'msg_chatcmpl-0f8fad5bd9cb469fa16570867728950e',
  type: 'message',
  role: 'assistant',
  content: [{ type: 'text', text: 'Hello there, nice to meet!' }],
  model: 'openai/gpt-4o-mini',
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 13, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  meta: { usage: { credits_used: 12.3, usd_spent: 0.00000615 } },
};

const MESSAGES_ERRORS = {
  ...API_KEY_ERRORS,
  ...MODEL_ENDPOINT_ERRORS,
  401: { description: API_KEY_ERRORS[401].description, messages: ErrorMessages.invalidApiKeyIn('x-api-key: <API_KEY>') },
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: {
      noMaxTokens: `${ErrorMessages.bodyValidationPrefix} max_tokens: Expected an integer. Received nothing`,
      badRole: `${ErrorMessages.bodyValidationPrefix} messages[0].role: Expected one of 'user', 'assistant', 'system'. Received 'tool'`,
    },
  },
};

const COUNT_TOKENS_ERRORS = { ...MESSAGES_ERRORS, 403: { description: 'The account is suspended', messages: ErrorMessages.accountSuspended } };

/**
 * Anthropic's Messages API (what Claude Code and the Anthropic SDKs speak) on every chat model
 * of the catalogue: translated to the chat pipeline's request and run by it, as chat completions
 * are (admission, holds, fallback, billing), and answered in Anthropic's shapes, errors included.
 */
@ApiTags('messages')
@Controller()
@UseFilters(MessagesErrorFilter)
export class MessagesController {
  constructor(
    private readonly chat: ChatService,
    private readonly pipeline: PaidRequestPipeline,
  ) {}

  // `/messages` too: the Vercel AI SDK's Anthropic provider posts to `<baseURL>/messages`, its default base ending in `/v1`.
  @DirectRoute()
  @Post(['v1/messages', 'messages'])
  @MessagesErrorResponses(MESSAGES_ERRORS)
  @RequireApiKey({ credits: true, xApiKeyHeader: true })
  @ApiOperation({
    summary: "Create a message, Anthropic's Messages API (stream: true answers Anthropic's server-sent events)",
    description:
      'The key as `x-api-key` or `Authorization: Bearer`; `anthropic-version` and `anthropic-beta` are accepted, as is `?beta=true`. Errors come as `{type: "error", error: {type, message}}` with the gateway\'s own error fields beside them.',
  })
  @ApiHeader({ name: 'anthropic-version', required: false, example: '2023-06-01' })
  @ApiBody({ type: MessagesRequestDto, examples: MESSAGES_EXAMPLES })
  @ApiOkResponse({ example: MESSAGE_ANSWER, description: 'The message (with stream: true, text/event-stream events instead)' })
  async create(@Body() body: MessagesRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    const { model } = this.pipeline.resolveModel(body.model, 'messages');
    const { chatRequest, front } = messagesFrontOf(body, model, request.headers, response);
    await respondToChat(this.chat, chatRequest, request, response, undefined, front);
  }

  @DirectRoute()
  @Post(['v1/messages/count_tokens', 'messages/count_tokens'])
  @HttpCode(200)
  @MessagesErrorResponses(COUNT_TOKENS_ERRORS)
  @RequireApiKey({ credits: true, xApiKeyHeader: true })
  @ApiOperation({ summary: "Count a message's input tokens with the gateway's tokenizer (not billed; a suspended account is refused)" })
  @ApiBody({ type: MessagesCountTokensRequestDto, examples: { hello: { summary: 'A short message', value: { model: 'gpt-4o-mini', messages: HELLO } } } })
  @ApiOkResponse({ example: { input_tokens: 14 } })
  async countTokens(@Body() body: MessagesCountTokensRequestDto, @Req() request: DirectRequest): Promise<{ input_tokens: number }> {
    const { model } = this.pipeline.resolveModel(body.model, 'messages');
    // Not billed, but tokenizer time: counted against the key's rate and requests in flight as a paid request is.
    const slot = await this.pipeline.admitUnpaid({ auth: request.context.auth!, requestId: request.context.requestId });
    try {
      return { input_tokens: await countPromptTokens(promptOf(body, model), { route: 'count_tokens', field: 'messages' }) };
    } finally {
      slot.release();
    }
  }
}
