import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Checked, IsStringField, describeWrongType } from '@igw/validation';
import { assetsIssues, jevQuestionsIssues, lunaInputIssues, lunaQuestionsIssues, stateIssues } from './decision-questions';

/** Swagger-only: the Jev shape, with an example to try from /docs. */
export class JevDecisionRequestDto {
  @ApiProperty({ example: 'typesafe/jev', description: 'typesafe/jev (floating: the current release), typesafe/jev-1.14, typesafe/jev-1.13 or liquid/d1' })
  model!: string;

  @ApiProperty({
    description: 'The content to judge: a string, a JSON object, or an array of texts. Images go in `assets` and are referenced here by name.',
    oneOf: [{ type: 'string' }, { type: 'object' }, { type: 'array', items: { type: 'string' } }],
    example: 'Customer email: "I was charged twice for my order #4411, please refund one of them today."',
  })
  state!: unknown;

  @ApiProperty({
    description:
      'Question name (1-64 letters, digits, _ or -) to question; 1 to 64 questions. `noul`: yes/no, optional `criteria` {true, false}. `choice`: `criteria` maps 2 to 255 option keys to descriptions. `score`: `criteria` lists 2 to 10 level descriptions, lowest first. `box` (experimental, typesafe/jev-1.14 only): locate what the instructions describe in an image asset.',
    type: 'object',
    additionalProperties: { type: 'object' },
    example: {
      is_complaint: { type: 'noul', instructions: 'Is the customer complaining?' },
      topic: { type: 'choice', instructions: 'What is the email about?', criteria: { billing: 'payments, refunds, invoices', shipping: 'delivery and tracking', other: 'anything else' } },
      urgency: { type: 'score', instructions: 'How urgent is it?', criteria: ['can wait', 'this week', 'today'] },
    },
  })
  questions!: Record<string, unknown>;

  @ApiPropertyOptional({
    description: `Images, by name: {type: 'image', format: png|jpeg|webp|gif, data_base64}; at most 8, 4 MiB each, each named in \`state\`. Audio and video are refused (400).`,
    type: 'object',
    additionalProperties: { type: 'object', properties: { type: { type: 'string', enum: ['image'] }, format: { type: 'string', enum: ['png', 'jpeg', 'webp', 'gif'] }, data_base64: { type: 'string', format: 'byte' } } },
  })
  assets?: Record<string, unknown>;
}

/** Swagger-only: the Luna shape (openai/gpt-6-luna), with an example. */
export class LunaDecisionRequestDto {
  @ApiProperty({ example: 'openai/gpt-6-luna' })
  model!: string;

  @ApiProperty({
    description: 'The content: a string, or user messages whose content is a string or `input_text` / `input_image` parts (`image_url`: a data:image/...;base64 URL).',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    example: 'I was charged twice for my order #4411, please refund one of them today.',
  })
  input!: unknown;

  @ApiProperty({
    description:
      'Named questions, 1 to 64: `predicate` (yes/no), `choice` with `choices: [{value, description?}]` (2 to 255), `score` with `levels: [{label, description?}]` (2 to 10, lowest first).',
    type: 'array',
    items: { type: 'object' },
    example: [
      { name: 'is_complaint', type: 'predicate', instructions: 'Is the customer complaining?' },
      { name: 'topic', type: 'choice', instructions: 'What is it about?', choices: [{ value: 'billing' }, { value: 'shipping' }, { value: 'other' }] },
      { name: 'urgency', type: 'score', levels: [{ label: 'low' }, { label: 'medium' }, { label: 'high' }] },
    ],
  })
  questions!: unknown[];
}

/**
 * The body of POST /v1/decisions, either shape: the pipe checks each field as far as it can
 * alone (every bound, question and asset); which shape the model takes is checked once the
 * model is known (a body in the other shape is a 400 that names the right one).
 */
export class DecisionRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 })
  model!: string;

  @IsOptional()
  @Checked('decisionState', (value) => stateIssues(value))
  state?: unknown;

  @IsOptional()
  @Checked('decisionAssets', (value) => assetsIssues(value))
  assets?: Record<string, unknown>;

  @IsOptional()
  @Checked('decisionInput', (value) => lunaInputIssues(value))
  input?: unknown;

  @Checked('decisionQuestions', (value) => {
    if (Array.isArray(value)) return lunaQuestionsIssues(value);
    if (typeof value === 'object' && value !== null) return jevQuestionsIssues(value);
    return [`Expected an object of named questions (Jev models) or an array of named questions (openai/gpt-6-luna). Received ${describeWrongType(value)}`];
  })
  questions!: Record<string, unknown> | unknown[];

  @IsOptional()
  @IsStringField({ nonEmpty: true })
  provider?: string;
}
