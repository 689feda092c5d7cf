import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses, RequireAdminToken } from '@igw/http';
import { AccountIdPipe } from '../accounts/account-id.pipe';
import { SetWebhookDto, WebhookEventsQueryDto } from './dto/set-webhook.dto';
import { WebhookDto, WebhookEventDto } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

const notFound = { 404: { description: 'No such account, or it has no webhook', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 has no webhook' } };

@ApiTags('admin')
@RequireAdminToken()
@Controller('admin/v1/accounts/:id/webhook')
export class AdminWebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Put()
  @ApiOperation({
    summary: "Set the account's webhook (alerts: balance under its threshold, key budgets at 80 % and 100 %)",
    description:
      'Replaces the whole webhook. The secret is write-only: the answer shows only that one is set, and leaving it out keeps the current one. ' +
      'Events are signed with it (X-Gateway-Signature, see docs/api.md) and retried with back-off until the receiver answers 2xx.',
  })
  @ApiOkResponse({ type: WebhookDto })
  @ApiErrorResponses({ 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } })
  async set(@Param('id', AccountIdPipe) id: string, @Body() body: SetWebhookDto): Promise<WebhookDto> {
    return this.webhooks.set(id, body);
  }

  @Get()
  @ApiOperation({ summary: "The account's webhook, without its secret" })
  @ApiOkResponse({ type: WebhookDto })
  @ApiErrorResponses(notFound)
  async get(@Param('id', AccountIdPipe) id: string): Promise<WebhookDto> {
    return this.webhooks.get(id);
  }

  @Delete()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: "Remove the account's webhook (events not delivered yet are dropped)" })
  @ApiNoContentResponse()
  @ApiErrorResponses(notFound)
  async remove(@Param('id', AccountIdPipe) id: string): Promise<void> {
    await this.webhooks.remove(id);
  }

  @Get('events')
  @ApiOperation({ summary: "The account's newest alert events and how their delivery went" })
  @ApiOkResponse({ type: WebhookEventDto, isArray: true })
  @ApiErrorResponses({ 404: { description: 'No such account', messages: 'Account 7c9e6679-7425-40de-944b-e07fc1f90ae7 not found' } })
  async events(@Param('id', AccountIdPipe) id: string, @Query() query: WebhookEventsQueryDto): Promise<{ object: 'list'; data: WebhookEventDto[] }> {
    return { object: 'list', data: await this.webhooks.events(id, query.limit ?? 50) };
  }
}
