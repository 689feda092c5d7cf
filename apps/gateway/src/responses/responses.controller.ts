import type { ServerResponse } from 'node:http';
import { Body, Controller, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, ResponsesRequestDto } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey, type DirectRequest, DirectRoute } from '@igw/http';
import { respondToChat } from '../chat/chat-responder';
import { DROPPED_TOOLS_HEADER } from '../chat/native-upstream';
import { ChatService } from '../chat/chat.service';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { responsesFrontOf } from './responses-native';
import { previousResponseNotFound, StoredResponses } from './stored-responses';

/** The response header naming the built-in tools left out of the upstream call. */
export { DROPPED_TOOLS_HEADER };

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'The current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The first is Try it out's default: a request that succeeds as it is. */
const RESPONSES_EXAMPLES = {
  hello: { summary: 'A short answer (any chat model of the catalogue)', value: { model: 'gpt-4o-mini', input: 'Say hello in five words.' } },
  streaming: { summary: 'Streamed as typed events (text/event-stream)', value: { model: 'gpt-4o-mini', input: 'Say hello in five words.', stream: true } },
  instructions: {
    summary: 'Instructions, a message list and a token limit',
    value: { model: 'gpt-4o-mini', instructions: 'You answer in one sentence.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is a gateway?' }] }], max_output_tokens: 100 },
  },
  tools: { summary: 'A function the model may call', value: { model: 'gpt-4o-mini', input: 'What is the weather in Paris?', tools: [WEATHER_TOOL] } },
  notStored: { summary: 'Nothing kept (store: false): continue by sending the whole conversation again', value: { model: 'gpt-4o-mini', input: 'Say hello in five words.', store: false } },
  toolOutput: {
    summary: "A function call's output sent back (the whole conversation in input)",
    value: {
      model: 'gpt-4o-mini',
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { type: 'function_call', call_id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_0', output: 'Sunny, 21 degrees' },
      ],
      tools: [WEATHER_TOOL],
    },
  },
};

const RESPONSE_ANSWER = {
  id: 'resp_0f8fad5bd9cb469fa16570867728950e',
  object: 'response',
  created_at: 1764000000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'openai/gpt-4o-mini',
  output: [
    {
      id: 'msg_67ccd2bf17f0819081ff3bb2cf6508e6',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hello there, nice to meet!', annotations: [], logprobs: [] }],
    },
  ],
  usage: { input_tokens: 13, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 },
  meta: { usage: { credits_used: 12.3, usd_spent: 0.00000615 } },
};

const RESPONSES_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: {
      noInput: `${ErrorMessages.bodyValidationPrefix} input: Expected a string or an array of input items. Received nothing`,
      itemReference: `${ErrorMessages.bodyValidationPrefix} input[0].id: no stored item "msg_0" of this API key: item_reference names input or output items of responses kept with store: true (until they expire or are deleted)`,
    },
  },
  404: {
    description: 'Unknown model, or a previous_response_id this API key has no stored response of (never stored, deleted, expired, another key\'s unless RESPONSES_SHARED_PER_ACCOUNT=true, or another account\'s)',
    messages: { model: MODEL_ENDPOINT_ERRORS[404].messages, previousResponse: previousResponseNotFound('resp_0f8fad5bd9cb469fa16570867728950e') },
  },
};

/**
 * OpenAI's Responses API (what Codex, the Agents SDK and the `openai` SDK's `responses` speak) on
 * every chat model of the catalogue: translated to the chat pipeline's request and run by it, as
 * chat completions are (admission, holds, fallback, billing), and answered in the Responses shapes.
 */
@ApiTags('responses')
@Controller()
export class ResponsesController {
  constructor(
    private readonly chat: ChatService,
    private readonly pipeline: PaidRequestPipeline,
    private readonly stored: StoredResponses,
  ) {}

  @DirectRoute()
  @Post('v1/responses')
  @RequireApiKey()
  @ApiOperation({
    summary: 'Create a response, OpenAI Responses API (stream: true answers its typed server-sent events)',
    description:
      'Served for every chat model through the chat pipeline. Built-in tools (web_search, ...) are left out of the upstream call and named in the `x-gateway-dropped-tools` response header; a `tool_choice` forcing one is refused. The response is kept (unless `store: false`) before it is answered, for RESPONSES_RETENTION_DAYS: `previous_response_id` continues it (its turns go ahead of `input`, its instructions do not), `GET`/`DELETE /v1/responses/{id}` read and delete it.',
  })
  @ApiBody({ type: ResponsesRequestDto, examples: RESPONSES_EXAMPLES })
  @ApiOkResponse({ example: RESPONSE_ANSWER, description: 'The response (with stream: true, text/event-stream events instead)', headers: { [DROPPED_TOOLS_HEADER]: { description: 'The built-in tools left out of the upstream call, comma-separated; in each name, characters outside visible ASCII, commas and percent signs are percent-encoded (UTF-8)', schema: { type: 'string' } } } })
  @ApiErrorResponses(RESPONSES_ERRORS)
  async create(@Body() body: ResponsesRequestDto, @Req() request: DirectRequest, @Res() response: ServerResponse): Promise<void> {
    const resolved = this.pipeline.resolveModel(body.model, 'responses');
    const auth = request.context.auth!;
    this.stored.assertMayStore(body, auth.accountId);
    const bodyBytes = request.context.bodyBytes ?? 0;
    // Admitted in two steps: the key's rates, its slot and a hold for the body itself before any
    // look-up or translation (a key that cannot be let in costs none of it), the rest of the
    // hold once the conversation it sends, stored turns and references resolved, is known.
    const firstHold = await this.pipeline.admitFirst({ requestId: request.context.requestId, auth, context: request.context }, 'responses', resolved, {
      input_tokens: bodyBytes,
    });
    try {
      const conversation = await this.stored.conversationOf(body, this.stored.ownerOf(auth), bodyBytes);
      const keep = this.stored.keeper(body, auth, conversation.ownInput);
      const { chatRequest, front } = responsesFrontOf(conversation.body, resolved.model, response, { asked: body, keep });
      // Held and checked against the context as what is sent: the stored turns and referenced items with the body.
      await respondToChat(this.chat, chatRequest, request, response, undefined, { ...front, bodyBytes: conversation.bytes, firstHold });
    } finally {
      firstHold.release();
    }
  }
}
