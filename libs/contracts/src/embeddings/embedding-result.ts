import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MetaDto } from '../chat/chat-completion';

export class EmbeddingDto {
  @ApiProperty({ example: 'embedding' }) object!: 'embedding';
  @ApiProperty({ description: 'Position of the input this vector belongs to' }) index!: number;
  @ApiProperty({
    oneOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string', format: 'byte' }],
    description: 'The vector: numbers, or with encoding_format base64 its little-endian float32 bytes in base64',
  })
  embedding!: number[] | string;
}

export class EmbeddingUsageDto {
  @ApiProperty({ description: 'Tokens of all inputs (the upstream count, else the gateway tokenizer count)' }) prompt_tokens!: number;
  @ApiProperty({ description: 'Equal to prompt_tokens: embeddings generate no tokens' }) total_tokens!: number;
}

/** The spec's Embedding result, plus `meta.usage` as every billable response carries. */
export class EmbeddingListDto {
  @ApiProperty({ example: 'list' }) object!: 'list';
  @ApiProperty({ type: [EmbeddingDto], description: 'One vector per input, in input order' }) data!: EmbeddingDto[];
  @ApiProperty({ description: 'The catalogue id of the model', example: 'openai/text-embedding-3-small' }) model!: string;
  @ApiProperty({ type: EmbeddingUsageDto }) usage!: EmbeddingUsageDto;
  @ApiPropertyOptional({ type: MetaDto, nullable: true, description: 'credits_used and usd_spent: exactly what the ledger records (input tokens only)' })
  meta?: MetaDto | null;
}
