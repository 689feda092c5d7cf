import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';

export const CHAT_ROLES = ['system', 'user', 'assistant', 'tool', 'developer'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

export class ChatMessageDto {
  @ApiProperty({ enum: CHAT_ROLES })
  @IsIn(CHAT_ROLES)
  role!: ChatRole;

  @ApiPropertyOptional({
    description: 'A string, or an array of text parts {type: "text", text}',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    nullable: true,
  })
  @IsOptional()
  content?: string | Array<{ type: 'text'; text: string }> | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  name?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  tool_call_id?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } })
  @IsOptional()
  @IsArray()
  tool_calls?: unknown[];
}

export class StreamOptionsDto {
  @ApiProperty()
  @IsBoolean()
  include_usage!: boolean;
}

export class ChatCompletionRequestDto {
  @ApiProperty({ description: 'A catalogue model id or alias', example: 'gpt-4o-mini' })
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  model!: string;

  @ApiPropertyOptional({ description: 'Provider routing override: auto (default), fallback, or a source key', example: 'auto' })
  @IsOptional()
  @IsString()
  provider?: string;

  @ApiProperty({ type: [ChatMessageDto] })
  @IsArray()
  @ArrayNotEmpty()
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages!: ChatMessageDto[];

  @ApiPropertyOptional({ minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  max_completion_tokens?: number;

  @ApiPropertyOptional({ minimum: 1 })
  @IsOptional()
  @IsNumber()
  @Min(1)
  max_tokens?: number;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  stream?: boolean;

  @ApiPropertyOptional({ type: StreamOptionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto;

  @ApiPropertyOptional({ minimum: 0, maximum: 2 })
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0.01, maximum: 1 })
  @IsOptional()
  @IsNumber()
  @Min(0.01)
  @Max(1)
  top_p?: number;
}
