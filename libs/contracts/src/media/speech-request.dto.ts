import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsNumberField, IsOneOf, IsStringField, NullMeansAbsent } from '@igw/validation';
import { IsTextOfAtMost, PROVIDER_FIELD_DESCRIPTION } from './media-fields';

/** OpenAI's limit on one speech request's input; Deepgram Aura takes up to 2,000 (its 413 reaches the client as a 4xx). */
export const MAX_SPEECH_CHARACTERS = 4096;
/** Audio encodings the gateway answers with; WAV is the default. */
export const SPEECH_AUDIO_FORMATS = ['wav', 'mp3', 'opus', 'flac', 'aac', 'pcm'] as const;
export type SpeechAudioFormat = (typeof SPEECH_AUDIO_FORMATS)[number];
/** Voice names go into upstream model names and URLs (Deepgram `aura-2-<voice>-en`): letters, digits, `-`, `_`, `.` only. */
export const VOICE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The body of POST /tts (spec: "POST /tts"). The answer is the audio bytes, its cost in headers. */
export class SpeechRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue id or alias of a text-to-speech model', example: 'tts-1' })
  model!: string;

  @ApiProperty({
    description: `The text to speak: at most ${MAX_SPEECH_CHARACTERS} characters (Unicode code points), each billed at the model's per-character price`,
    example: 'Hello! Your order has shipped.',
    maxLength: MAX_SPEECH_CHARACTERS,
  })
  @IsTextOfAtMost(MAX_SPEECH_CHARACTERS)
  text!: string;

  @ApiPropertyOptional({
    description: "The provider's voice: OpenAI `alloy` (default), `nova`, `shimmer`, ...; Deepgram Aura `thalia` (default), `orion`, ... (1-64 letters, digits, `_`, `-`, `.`)",
    example: 'alloy',
  })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ pattern: VOICE_PATTERN, patternText: '1-64 letters, digits, underscores, dashes or dots, starting with a letter or digit' })
  voice?: string;

  @ApiPropertyOptional({ enum: SPEECH_AUDIO_FORMATS, default: 'wav', description: 'Audio encoding of the answer (`pcm`: raw 16-bit little-endian samples)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(SPEECH_AUDIO_FORMATS)
  format?: SpeechAudioFormat;

  @ApiPropertyOptional({ enum: SPEECH_AUDIO_FORMATS, description: 'Another name for `format` (Deepgram says encoding); when both are given they must agree' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(SPEECH_AUDIO_FORMATS)
  encoding?: SpeechAudioFormat;

  @ApiPropertyOptional({ minimum: 0.25, maximum: 4, default: 1, description: 'Playback speed, where the provider supports it (OpenAI)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ min: 0.25, max: 4 })
  speed?: number;

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}
