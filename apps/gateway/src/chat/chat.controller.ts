import { Controller, HttpStatus, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBody, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ChatCompletionDto, ChatCompletionRequestDto, ErrorBodyDto, ErrorMessages } from '@igw/contracts';
import { ChatBody, GatewayException, PathId, RequireApiKey } from '@igw/platform';
import type { Request, Response } from 'express';
import { respondToChat } from './chat-responder';
import { ChatService } from './chat.service';
import { AzureChatCompletionRequestDto } from './dto/azure-chat-request.dto';

@ApiTags('chat')
@Controller()
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @Post(['v1/chat/completions', 'chat/completions'])
  @RequireApiKey()
  @ApiOperation({ summary: 'Create a chat completion (stream: true answers text/event-stream)' })
  @ApiBody({ type: ChatCompletionRequestDto })
  @ApiOkResponse({ type: ChatCompletionDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto, description: 'Unknown model' })
  async create(@ChatBody() body: ChatCompletionRequestDto, @Req() request: Request, @Res() response: Response): Promise<void> {
    await respondToChat(this.chat, body, request, response);
  }

  /**
   * The Azure OpenAI flow: the deployment in the path is a catalogue id or alias (slashes
   * allowed), the key in `Api-Key` (Bearer works too), and any `model` in the body is ignored.
   */
  @Post('openai/deployments/*deployment/chat/completions')
  @RequireApiKey({ credits: true, apiKeyHeader: true })
  @ApiOperation({ summary: 'Azure-style chat completion; point the AzureOpenAI client at the gateway base address' })
  @ApiQuery({ name: 'api-version', required: true, description: 'Supplied by the client, e.g. 2024-10-21' })
  @ApiBody({ type: AzureChatCompletionRequestDto })
  @ApiOkResponse({ type: ChatCompletionDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
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
