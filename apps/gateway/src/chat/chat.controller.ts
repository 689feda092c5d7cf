import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ChatCompletionDto, ChatCompletionRequestDto, ErrorBodyDto } from '@igw/contracts';
import { RequireApiKey } from '@igw/platform';
import type { Request, Response } from 'express';
import { ChatService } from './chat.service';

@ApiTags('chat')
@Controller()
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @Post(['v1/chat/completions', 'chat/completions'])
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({ summary: 'Create a chat completion' })
  @ApiOkResponse({ type: ChatCompletionDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto, description: 'Unknown model' })
  async create(
    @Body() body: ChatCompletionRequestDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ChatCompletionDto> {
    // A client that goes away before its answer is written cancels the upstream call.
    const abort = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) abort.abort();
    });
    return this.chat.complete({ requestId: request.context.requestId, auth: request.context.auth!, body, signal: abort.signal });
  }
}
