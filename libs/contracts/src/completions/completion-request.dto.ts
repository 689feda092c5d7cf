import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { CHAT_REQUEST_RULES, logitBiasIssues, MAX_STOP_SEQUENCES, stopIssues, StreamOptionsDto } from '../chat/chat-completion-request.dto';
import { Checked, IsBooleanField, isRecord, IsNumberField, IsStringField, NestedObject, NullMeansAbsent, RefusesUnknownFields, describeValue, describeWrongType, relativeIssueLine } from '@igw/validation';

/** Prompts one request may hold, and the choices it may ask for in all (prompts × the larger of n and best_of). */
export const MAX_COMPLETION_PROMPTS = 2048;
export const MAX_COMPLETION_CHOICES = 2048;
/** OpenAI's bounds: `best_of` up to 20, `logprobs` up to 5. */
export const MAX_BEST_OF = 20;
export const MAX_COMPLETION_LOGPROBS = 5;

/** What `prompt` may be: a text, texts, one token array, or token arrays (each a prompt). */
export type CompletionPrompt = string | string[] | number[] | number[][];

const PROMPT_EXPECTED = `a string, or a non-empty array (at most ${MAX_COMPLETION_PROMPTS}) of strings, of token ids, or of non-empty token id arrays`;
const isTokenId = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** The issues of a `prompt` value; each line names the item (`[2]`, `[1][4]`) it is about. */
export function completionPromptIssues(value: unknown): string[] {
  if (typeof value === 'string') return [];
  if (!Array.isArray(value)) return [`Expected ${PROMPT_EXPECTED}. Received ${describeWrongType(value)}`];
  if (value.length === 0) return [`Expected ${PROMPT_EXPECTED}. Received an empty array`];
  if (value.length > MAX_COMPLETION_PROMPTS && !isTokenId(value[0])) return [`Expected at most ${MAX_COMPLETION_PROMPTS} prompts. Received ${value.length}`];
  const first: unknown = value[0];
  if (typeof first === 'number') {
    const bad = value.findIndex((item) => !isTokenId(item));
    return bad < 0 ? [] : [relativeIssueLine(`[${bad}]`, `Expected a token id (an integer of at least 0), as the first item is. Received ${describeWrongType(value[bad])}`)];
  }
  if (Array.isArray(first)) {
    return value.flatMap((item: unknown, index) => {
      if (!Array.isArray(item) || item.length === 0) return [relativeIssueLine(`[${index}]`, `Expected a non-empty array of token ids, as the first item is. Received ${describeWrongType(item)}`)];
      const bad = item.findIndex((token) => !isTokenId(token));
      return bad < 0 ? [] : [relativeIssueLine(`[${index}][${bad}]`, `Expected a token id (an integer of at least 0). Received ${describeWrongType(item[bad])}`)];
    });
  }
  return value.flatMap((item: unknown, index) => (typeof item === 'string' ? [] : [relativeIssueLine(`[${index}]`, `Expected a string, as the first item is. Received ${describeWrongType(item)}`)]));
}

/** `best_of` picks the best `n` of the completions it generates, so it is at least `n`; it cannot stream. */
function bestOfIssues(value: unknown, object: unknown): string[] {
  if (!isRecord(object)) return [];
  const n = typeof object.n === 'number' ? object.n : 1;
  if (typeof value === 'number' && value < n) return [`Expected at least n (${n}): best_of completions are generated and the best n answered. Received ${value}`];
  if (value !== 1 && object.stream === true) return [`Expected 1 or nothing with stream: true (the best of several completions is known only at their end). Received ${describeValue(value)}`];
  return [];
}

/**
 * The body of POST /v1/completions, OpenAI's legacy text completions, in OpenAI's shape so the
 * official SDKs work unchanged. It goes upstream as it came (the model renamed) to the sources
 * that serve the API, so a field it does not declare is refused, never dropped.
 */
@RefusesUnknownFields()
export class CompletionRequestDto {
  @IsStringField(CHAT_REQUEST_RULES.model, { description: 'A catalogue id or alias of a model one of whose sources serves legacy completions', example: 'gpt-3.5-turbo-instruct' })
  model!: string;

  @ApiProperty({
    description: `The prompt: a string, strings (each completed, n choices each), or token ids (an array of integers, or an array of such arrays). At most ${MAX_COMPLETION_PROMPTS} prompts.`,
    oneOf: [
      { type: 'string', example: 'Say this is a test.' },
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'integer' } },
      { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
    ],
  })
  @Checked('completionPrompt', (value) => completionPromptIssues(value))
  prompt!: CompletionPrompt;

  @IsStringField({}, { optional: true, description: 'The text after the completion (fill-in-the-middle)', nullable: true })
  suffix?: string | null;

  @IsNumberField({ integer: true, min: 0 }, { optional: true, description: "The most tokens to generate per choice (OpenAI's default is 16); at most the model's output limit. 0 with echo scores the prompt alone", nullable: true })
  max_tokens?: number | null;

  @IsNumberField(CHAT_REQUEST_RULES.temperature, { optional: true, nullable: true })
  temperature?: number | null;

  @IsNumberField({ min: 0, max: 1 }, { optional: true, nullable: true })
  top_p?: number | null;

  @IsNumberField(CHAT_REQUEST_RULES.n, { optional: true, default: 1, description: 'Choices per prompt', nullable: true })
  n?: number | null;

  @IsNumberField({ integer: true, min: 1, max: MAX_BEST_OF }, { optional: true, description: 'Completions generated per prompt (all billed), the best n answered; at least n, not with stream', nullable: true })
  @Checked('bestOf', (value, args) => bestOfIssues(value, args.object))
  best_of?: number | null;

  @IsBooleanField({ optional: true, default: false, description: 'Answer with server-sent events of text_completion chunks, then data: [DONE]', nullable: true })
  stream?: boolean | null;

  @NestedObject(() => StreamOptionsDto, undefined, { optional: true, description: 'include_usage: a last chunk with the usage (and meta.usage); only with stream: true', nullable: true })
  stream_options?: StreamOptionsDto | null;

  @IsNumberField({ integer: true, min: 0, max: MAX_COMPLETION_LOGPROBS }, { optional: true, description: 'The log probabilities of this many likeliest tokens at each position', nullable: true })
  logprobs?: number | null;

  @IsBooleanField({ optional: true, description: 'The prompt ahead of each completion in its text', nullable: true })
  echo?: boolean | null;

  @ApiPropertyOptional({ nullable: true, oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: MAX_STOP_SEQUENCES }] })
  @IsOptional()
  @Checked('stop', (value) => stopIssues(value))
  stop?: string | string[] | null;

  @IsNumberField(CHAT_REQUEST_RULES.penalty, { optional: true, nullable: true })
  presence_penalty?: number | null;

  @IsNumberField(CHAT_REQUEST_RULES.penalty, { optional: true, nullable: true })
  frequency_penalty?: number | null;

  @ApiPropertyOptional({ type: 'object', nullable: true, additionalProperties: { type: 'number', minimum: -100, maximum: 100 } })
  @IsOptional()
  @Checked('logitBias', (value) => logitBiasIssues(value))
  logit_bias?: Record<string, number> | null;

  @IsNumberField(CHAT_REQUEST_RULES.seed, { optional: true, nullable: true })
  seed?: number | null;

  @IsStringField({ maxLength: 256 }, { optional: true, description: 'An end-user id, forwarded upstream', nullable: true })
  user?: string | null;

  @ApiPropertyOptional({ description: 'Provider routing override, case-insensitive: `auto`, or a connection one of its sources names', default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField(CHAT_REQUEST_RULES.provider)
  provider?: string;
}
