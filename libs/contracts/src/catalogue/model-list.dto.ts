import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The public model catalogue's entry as `GET /v1/models` shows it (Swagger only: the projection is built in @igw/domain's catalogue-query). */
export class ModelEntryDto {
  @ApiProperty({ description: 'Canonical id; may contain slashes', example: 'openai/gpt-4o-mini' }) id!: string;
  @ApiProperty({ example: 'model', description: "OpenAI's object type" }) object!: 'model';
  @ApiProperty({ description: 'Unix seconds of info.releasedAt; 0 when unknown', example: 1721260800 }) created!: number;
  @ApiProperty({ description: "The id's namespace (before its first slash), else info.developer", example: 'openai' }) owned_by!: string;
  @ApiProperty({ type: [String], description: 'Other names that resolve to this model', example: ['gpt-4o-mini'] }) aliases!: string[];
  @ApiProperty({ description: 'Endpoint type, `<family>/<endpoint-kind>`', example: 'openai/chat-completions' }) type!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'name, developer, description, releasedAt, contextLength, outputMax, ...' }) info!: Record<string, unknown>;
  @ApiProperty({ type: [String], example: ['playground:chat', 'tier:standard'] }) tags!: string[];
  @ApiProperty({
    type: [String],
    description:
      'The APIs the model can be called through, each named after its path without /v1, slashes as dots: chat.completions, responses and messages for every chat model; embeddings, images.generations, stt, tts or decisions for the others (a chat model the catalogue marks as answering decisions lists decisions too)',
    example: ['chat.completions', 'responses', 'messages', 'generateContent'],
  })
  apis!: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'With include=modalities: {input, output}, arrays of modality names' }) modalities?: { input: string[]; output: string[] };
  @ApiPropertyOptional({ type: [String], description: 'With include=capabilities' }) capabilities?: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'With include=pricing, when the model has prices: kind, currency, units, dimensions, variants' }) pricing?: Record<string, unknown>;
}

/** `GET /v1/models`: OpenAI's list shape, which the SDKs read. */
export class ModelListDto {
  @ApiProperty({ example: 'list' }) object!: 'list';
  @ApiProperty({ type: [ModelEntryDto] }) data!: ModelEntryDto[];
}

/** `GET /model/{id}`: the spec's wrapped entry. */
export class WrappedModelDto {
  @ApiProperty({ example: 'model' }) object!: 'model';
  @ApiProperty({ type: ModelEntryDto }) data!: ModelEntryDto;
}
