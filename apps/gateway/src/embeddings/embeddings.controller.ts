import { Body, Controller, HttpCode, HttpStatus, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { EmbeddingListDto, EmbeddingRequestDto, ErrorMessages } from '@igw/contracts';
import { ApiErrorResponses, GatewayException, MODEL_ENDPOINT_ERRORS, PathId, RequireApiKey } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { AzureEmbeddingRequestDto } from './dto/azure-embedding-request.dto';
import { EmbeddingsService } from './embeddings.service';

/** The first is Try it out's default: a request that succeeds as it is. */
const EMBEDDING_EXAMPLES = {
  two: { summary: 'Two inputs, short vectors', value: { model: 'text-embedding-3-small', input: ['Hello', 'World'], dimensions: 8 } },
  one: { summary: 'One input, full-length vector', value: { model: 'text-embedding-3-small', input: 'The quick brown fox' } },
};

const AZURE_EMBEDDING_EXAMPLES = {
  two: { summary: 'Two inputs (the deployment in the path is the model)', value: { input: ['Hello', 'World'], dimensions: 8 } },
};

const EMBEDDING_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body: the message names the first wrong field',
    messages: `${ErrorMessages.bodyValidationPrefix} input: Expected a non-empty string, or a non-empty array (at most 2048) of non-empty strings, of token ids, or of non-empty token id arrays. Received nothing`,
  },
};

@ApiTags('embeddings')
@Controller()
export class EmbeddingsController {
  constructor(private readonly embeddings: EmbeddingsService) {}

  @Post(['v1/embeddings', 'embeddings'])
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({ summary: 'Create embeddings: one vector per input, billed by input tokens' })
  @ApiBody({ type: EmbeddingRequestDto, examples: EMBEDDING_EXAMPLES })
  @ApiOkResponse({ type: EmbeddingListDto })
  @ApiErrorResponses(EMBEDDING_ERRORS)
  create(@Body() body: EmbeddingRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<EmbeddingListDto> {
    return this.run(body, request, response);
  }

  /** The Azure OpenAI flow, as for chat: the deployment in the path is a catalogue id or alias (slashes allowed). */
  @Post('openai/deployments/*deployment/embeddings')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey({ credits: true, apiKeyHeader: true })
  @ApiOperation({ summary: 'Azure-style embeddings; point the AzureOpenAI client at the gateway base address' })
  @ApiParam({ name: 'deployment', description: 'A catalogue model id or alias', example: 'text-embedding-3-small' })
  @ApiQuery({ name: 'api-version', required: true, description: 'Supplied by the client', example: '2024-10-21' })
  @ApiBody({ type: AzureEmbeddingRequestDto, examples: AZURE_EMBEDDING_EXAMPLES })
  @ApiOkResponse({ type: EmbeddingListDto })
  @ApiErrorResponses(EMBEDDING_ERRORS)
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
    return this.embeddings.embed({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation, cacheControl: request.headers['cache-control'] });
  }
}
