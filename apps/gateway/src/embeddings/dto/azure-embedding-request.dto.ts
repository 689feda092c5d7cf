import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { EmbeddingRequestDto } from '@igw/contracts';
import { IsOptional, IsString } from 'class-validator';

/** The embeddings request of the Azure-style path: the deployment in the path names the model. */
export class AzureEmbeddingRequestDto extends OmitType(EmbeddingRequestDto, ['model'] as const) {
  @ApiPropertyOptional({ description: 'Ignored: the deployment in the path names the model' })
  @IsOptional()
  @IsString()
  model?: string;
}
