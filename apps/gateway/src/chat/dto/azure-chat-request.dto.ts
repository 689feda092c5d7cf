import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { ChatCompletionRequestDto } from '@igw/contracts';
import { IsOptional, IsString } from 'class-validator';

/** The chat request of the Azure-style path: the deployment in the path names the model. */
export class AzureChatCompletionRequestDto extends OmitType(ChatCompletionRequestDto, ['model'] as const) {
  @ApiPropertyOptional({ description: 'Ignored: the deployment in the path names the model' })
  @IsOptional()
  @IsString()
  model?: string;
}
