import { Body, Controller, HttpCode, HttpStatus, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { EmbeddingListDto, EmbeddingRequestDto, ErrorBodyDto, ErrorMessages } from '@igw/contracts';
import { GatewayException, PathId, RequireApiKey } from '@igw/platform';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { AzureEmbeddingRequestDto } from './dto/azure-embedding-request.dto';
import { EmbeddingsService } from './embeddings.service';

@ApiTags('embeddings')
@Controller()
export class EmbeddingsController {
  constructor(private readonly embeddings: EmbeddingsService) {}

  @Post(['v1/embeddings', 'embeddings'])
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({ summary: 'Create embeddings: one vector per input, billed by input tokens' })
  @ApiOkResponse({ type: EmbeddingListDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  @ApiNotFoundResponse({ type: ErrorBodyDto, description: 'Unknown model' })
  create(@Body() body: EmbeddingRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<EmbeddingListDto> {
    return this.run(body, request, response);
  }

  /** The Azure OpenAI flow, as for chat: the deployment in the path is a catalogue id or alias (slashes allowed). */
  @Post('openai/deployments/*deployment/embeddings')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey({ credits: true, apiKeyHeader: true })
  @ApiOperation({ summary: 'Azure-style embeddings; point the AzureOpenAI client at the gateway base address' })
  @ApiQuery({ name: 'api-version', required: true, description: 'Supplied by the client, e.g. 2024-10-21' })
  @ApiOkResponse({ type: EmbeddingListDto })
  @ApiBadRequestResponse({ type: ErrorBodyDto })
  createForDeployment(
    @PathId('deployment') deployment: string,
    @Query('api-version') apiVersion: string | undefined,
    @Body() body: AzureEmbeddingRequestDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<EmbeddingListDto> {
    if (!apiVersion || typeof apiVersion !== 'string') {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} api-version: the query parameter api-version is required on the Azure-style path.`);
    }
    return this.run({ ...body, model: deployment } as EmbeddingRequestDto, request, response);
  }

  /** A client that goes away aborts the upstream call. */
  private run(body: EmbeddingRequestDto, request: Request, response: Response): Promise<EmbeddingListDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.embeddings.embed({ requestId: request.context.requestId, auth: request.context.auth!, body, signal: cancellation });
  }
}
