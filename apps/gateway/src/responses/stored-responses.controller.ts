import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, type StoredResponsesOwner } from '@igw/contracts';
import { ApiErrorResponses, GatewayException, RequireApiKey } from '@igw/http';
import type { Request } from 'express';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { inputItemsPageOf, responseNotFound, StoredResponses, type InputItemsList } from './stored-responses';

const EXAMPLE_ID = 'resp_0f8fad5bd9cb469fa16570867728950e';

const STORED_RESPONSE = {
  id: EXAMPLE_ID,
  object: 'response',
  created_at: 1764000000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  instructions: null,
  model: 'openai/gpt-4o-mini',
  output: [
    { id: 'msg_67ccd2bf17f0819081ff3bb2cf6508e6', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there, nice to meet!', annotations: [], logprobs: [] }] },
  ],
  previous_response_id: null,
  store: true,
  usage: { input_tokens: 13, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 },
  metadata: {},
  meta: { usage: { credits_used: 12.3, usd_spent: 0.00000615 } },
};

const NOT_FOUND = {
  404: { description: 'No such response of this API key: never stored, deleted, past RESPONSES_RETENTION_DAYS, another key\'s (unless RESPONSES_SHARED_PER_ACCOUNT=true) or another account\'s', messages: responseNotFound(EXAMPLE_ID) },
  429: { description: 'Too many look-ups of ids this account does not have (budgeted as key look-ups are: KEY_LOOKUP_MISS_BURST, KEY_LOOKUP_MISSES_PER_MINUTE)', messages: ErrorMessages.tooManyRequests },
  503: { description: 'The billing service, which keeps stored responses, is not answering', messages: 'Stored responses cannot be read right now: the billing service is not answering. Retry shortly.' },
};

const STREAM_NOT_SERVED = `${ErrorMessages.bodyValidationPrefix} stream: a stored response is read whole here; replaying it as events is not served. Leave stream out (or false).`;

const ID_PARAM = { name: 'id', description: 'The id of a response created with store: true (the default)', example: EXAMPLE_ID };

/**
 * Stored Responses API responses (`store: true`, the default), as OpenAI serves them: read,
 * deleted and their input items listed, by the account that created them only.
 */
@ApiTags('responses')
@Controller()
export class StoredResponsesController {
  constructor(
    private readonly stored: StoredResponses,
    private readonly pipeline: PaidRequestPipeline,
  ) {}

  /** A read or delete counts against the key's rate and requests in flight as a paid request does; it holds no money. */
  private async metered<T>(request: Request, work: (owner: StoredResponsesOwner) => Promise<T>): Promise<T> {
    const auth = request.context.auth!;
    const slot = await this.pipeline.admitUnpaid({ auth, requestId: request.context.requestId });
    try {
      return await work(this.stored.ownerOf(auth));
    } finally {
      slot.release();
    }
  }

  @Get('v1/responses/:id')
  @RequireApiKey({ credits: false, active: true })
  @ApiOperation({ summary: 'A stored response, as it was answered (OpenAI `responses.retrieve`)', description: `Kept for RESPONSES_RETENTION_DAYS (30 by default) after its created_at.` })
  @ApiParam(ID_PARAM)
  @ApiQuery({ name: 'stream', required: false, description: 'Not served: a stored response is read whole (only `false` is taken)', example: false })
  @ApiOkResponse({ example: STORED_RESPONSE })
  @ApiErrorResponses({ ...NOT_FOUND, 400: { description: 'stream=true: replaying a stored response as events is not served', messages: STREAM_NOT_SERVED } })
  retrieve(@Param('id') id: string, @Query('stream') stream: unknown, @Req() request: Request): Promise<Record<string, unknown>> {
    // The SDK's retrieve(id, {stream: true}) reads events: a JSON answer would fail in the client, so say so here.
    if (stream !== undefined && stream !== 'false') throw new GatewayException(HttpStatus.BAD_REQUEST, STREAM_NOT_SERVED);
    return this.metered(request, (owner) => this.stored.get(owner, id));
  }

  @Delete('v1/responses/:id')
  @HttpCode(200)
  @RequireApiKey({ credits: false, active: true })
  @ApiOperation({ summary: 'Delete a stored response and its items (OpenAI `responses.delete`); a response continuing it keeps its own turns' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ example: { id: EXAMPLE_ID, object: 'response.deleted', deleted: true } })
  @ApiErrorResponses(NOT_FOUND)
  delete(@Param('id') id: string, @Req() request: Request): Promise<{ id: string; object: 'response.deleted'; deleted: true }> {
    return this.metered(request, (owner) => this.stored.delete(owner, id));
  }

  @Get('v1/responses/:id/input_items')
  @RequireApiKey({ credits: false, active: true })
  @ApiOperation({ summary: "A stored response's own input items, a page at a time (OpenAI `responses.inputItems.list`); the turns it continued are theirs" })
  @ApiParam(ID_PARAM)
  @ApiQuery({ name: 'limit', required: false, description: 'Items per page, 1 to 100', example: 20 })
  @ApiQuery({ name: 'order', required: false, enum: ['asc', 'desc'], description: 'desc (the default) lists the last item first' })
  @ApiQuery({ name: 'after', required: false, description: 'An item id: list the items after it (the previous page\'s last_id)' })
  @ApiOkResponse({
    example: {
      object: 'list',
      data: [{ id: 'msg_9b2f0c1d3e4a5b6c7d8e9f0a1b2c3d4e', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello in five words.' }] }],
      first_id: 'msg_9b2f0c1d3e4a5b6c7d8e9f0a1b2c3d4e',
      last_id: 'msg_9b2f0c1d3e4a5b6c7d8e9f0a1b2c3d4e',
      has_more: false,
    },
  })
  @ApiErrorResponses({ ...NOT_FOUND, 400: { description: 'A wrong query parameter', messages: `${ErrorMessages.bodyValidationPrefix} limit: Expected an integer from 1 to 100. Received "500"` } })
  inputItems(@Param('id') id: string, @Query() query: Record<string, unknown>, @Req() request: Request): Promise<InputItemsList> {
    const page = inputItemsPageOf(query);
    return this.metered(request, (owner) => this.stored.inputItems(owner, id, page));
  }
}
