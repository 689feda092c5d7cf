import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

export class CompletionTokensDetailsDto {
  @ApiPropertyOptional({ nullable: true }) accepted_prediction_tokens?: number | null;
  @ApiPropertyOptional({ nullable: true }) audio_tokens?: number | null;
  @ApiPropertyOptional({ nullable: true }) reasoning_tokens?: number | null;
  @ApiPropertyOptional({ nullable: true }) rejected_prediction_tokens?: number | null;
}

export class PromptTokensDetailsDto {
  @ApiPropertyOptional({ nullable: true }) audio_tokens?: number | null;
  @ApiPropertyOptional({ nullable: true }) cached_tokens?: number | null;
}

export class UsageDto {
  @ApiProperty() prompt_tokens!: number;
  @ApiProperty() completion_tokens!: number;
  @ApiProperty({ description: 'prompt_tokens + completion_tokens' }) total_tokens!: number;
  @ApiPropertyOptional({ type: CompletionTokensDetailsDto, nullable: true })
  completion_tokens_details?: CompletionTokensDetailsDto | null;
  @ApiPropertyOptional({ type: PromptTokensDetailsDto, nullable: true })
  prompt_tokens_details?: PromptTokensDetailsDto | null;
}

export class MetaUsageDto {
  @ApiProperty({ description: 'Credits consumed by this request' }) credits_used!: number;
  @ApiProperty({ description: 'USD spent by this request' }) usd_spent!: number;
}

export class MetaDto {
  @ApiPropertyOptional({ type: MetaUsageDto, nullable: true }) usage!: MetaUsageDto | null;
}

export class ResponseMessageDto {
  @ApiProperty({ example: 'assistant' }) role!: 'assistant';
  @ApiProperty({ nullable: true }) content!: string | null;
  @ApiPropertyOptional({ nullable: true }) refusal?: string | null;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, nullable: true }) annotations?: unknown[] | null;
  @ApiPropertyOptional({ type: 'object', nullable: true, additionalProperties: true }) audio?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, nullable: true }) tool_calls?: unknown[] | null;
}

export class ChoiceDto {
  @ApiProperty() index!: number;
  @ApiProperty({ type: ResponseMessageDto }) message!: ResponseMessageDto;
  @ApiProperty({ enum: ['stop', 'length', 'content_filter', 'tool_calls'] }) finish_reason!: FinishReason;
  @ApiPropertyOptional({ type: 'object', nullable: true, additionalProperties: true }) logprobs?: Record<string, unknown> | null;
}

/** The spec's Chat completion resource. */
export class ChatCompletionDto {
  @ApiProperty() id!: string;
  @ApiProperty({ example: 'chat.completion' }) object!: 'chat.completion';
  @ApiProperty({ description: 'Unix seconds' }) created!: number;
  @ApiProperty({ type: [ChoiceDto] }) choices!: ChoiceDto[];
  @ApiProperty() model!: string;
  @ApiProperty({ type: UsageDto }) usage!: UsageDto;
  @ApiPropertyOptional({ type: MetaDto, nullable: true }) meta?: MetaDto | null;
}
