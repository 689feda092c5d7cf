import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { ChatCompletionRequestDto } from './chat-completion-request.dto';

/** The chat request of the Azure-style path: the deployment in the path names the model. */
export class AzureChatCompletionRequestDto extends OmitType(ChatCompletionRequestDto, ['model'] as const) {
  @ApiPropertyOptional({ description: 'Ignored: the deployment in the path names the model' })
  @IsOptional()
  @IsString()
  model?: string;
}
