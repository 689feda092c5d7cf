import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsBooleanField, IsNumberField, IsStringField, NullMeansAbsent } from '@igw/validation';
import { PROVIDER_FIELD_DESCRIPTION } from './media-fields';
import { MediaUsageDto } from './media-results';

export const MAX_AUDIO_URL_LENGTH = 2048;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/** The body of POST /stt (spec: "POST /stt"): the gateway fetches the audio at `url` itself. */
export class TranscriptionRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue id or alias of a speech-to-text model', example: 'whisper-1' })
  model!: string;

  @ApiProperty({
    description:
      'The audio file (WAV, MP3, FLAC, OGG, M4A, WebM...), http or https. The gateway fetches it: loopback, private, link-local and metadata addresses are refused (every resolved address and every redirect), unless MEDIA_FETCH_ALLOWLIST names the host; size and time are capped (MEDIA_FETCH_MAX_BYTES, MEDIA_FETCH_TIMEOUT_MS). Each refusal is a 400 naming url.',
    example: 'https://example.com/audio/meeting.wav',
    maxLength: MAX_AUDIO_URL_LENGTH,
  })
  @IsStringField({ nonEmpty: true, maxLength: MAX_AUDIO_URL_LENGTH })
  url!: string;

  @ApiPropertyOptional({ description: 'ISO-639-1 language of the audio (e.g. `en`, `pt-BR`); detected when absent', example: 'en' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ pattern: LANGUAGE, patternText: "a language code such as 'en' or 'pt-BR'" })
  language?: string;

  @ApiPropertyOptional({ description: 'Spelling or context hints (OpenAI `prompt`, Deepgram key terms), at most 1,000 characters' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ maxLength: 1000 })
  prompt?: string;

  @ApiPropertyOptional({ default: true, description: 'Word timings in the answer, where the provider gives them' })
  @NullMeansAbsent()
  @IsOptional()
  @IsBooleanField()
  words?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'The longest audio this request may transcribe, in seconds (default and maximum: STT_MAX_AUDIO_SECONDS, 3600). Its price is held while the request runs, so a lower value lets a small balance transcribe short audio; audio whose length, read from its bytes (WAV, MP3, Ogg, M4A, FLAC, WebM), is longer is refused with a 400 before transcription. Audio whose length cannot be read is billed for what the provider reports, even beyond it: the hold decides admission, never the price.',
  })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ integer: true, min: 1 })
  max_duration_seconds?: number;

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}

export class TranscriptWordDto {
  @ApiProperty({ example: 'quick' }) word!: string;
  @ApiProperty({ description: 'Seconds from the start', example: 0.4 }) start!: number;
  @ApiProperty({ example: 0.62 }) end!: number;
  @ApiPropertyOptional({ example: 0.99 }) confidence?: number;
  @ApiPropertyOptional({ example: 'quick' }) punctuated_word?: string;
}

export class TranscriptAlternativeDto {
  @ApiProperty({ example: 'The quick brown fox jumps over the lazy dog.' }) transcript!: string;
  @ApiPropertyOptional({ example: 0.99 }) confidence?: number;
  @ApiPropertyOptional({ type: [TranscriptWordDto] }) words?: TranscriptWordDto[];
}

export class TranscriptChannelDto {
  @ApiProperty({ type: [TranscriptAlternativeDto] }) alternatives!: TranscriptAlternativeDto[];
  @ApiPropertyOptional({ example: 'en' }) detected_language?: string;
}

export class TranscriptResultsDto {
  @ApiProperty({ type: [TranscriptChannelDto] }) channels!: TranscriptChannelDto[];
}

export class TranscriptMetadataDto {
  @ApiProperty({ description: "The gateway's request id (x-request-id)" }) request_id!: string;
  @ApiProperty({ description: 'ISO 8601' }) created!: string;
  @ApiProperty({ description: "Seconds of audio: the longer of the provider's figure and the length read from the file, else estimated from the size at 128 kbit/s", example: 2 })
  duration!: number;
  @ApiProperty({ example: 1 }) channels!: number;
  @ApiProperty({ description: 'The catalogue id of the model', example: 'openai/whisper-1' }) model!: string;
}

export class TranscriptionMetaUsageDto extends MediaUsageDto {
  @ApiProperty({ description: 'Seconds billed: the duration rounded up, at least 1 (audio whose length could not be read before transcribing is billed past max_duration_seconds when it lasts longer)', example: 2 }) audio_seconds!: number;
}

export class TranscriptionMetaDto {
  @ApiProperty({ type: TranscriptionMetaUsageDto }) usage!: TranscriptionMetaUsageDto;
}

/** The speech-to-text result, Deepgram-style: `results.channels[0].alternatives[0].transcript`. */
export class TranscriptionResultDto {
  @ApiProperty({ type: TranscriptMetadataDto }) metadata!: TranscriptMetadataDto;
  @ApiProperty({ type: TranscriptResultsDto }) results!: TranscriptResultsDto;
  @ApiProperty({ type: TranscriptionMetaDto }) meta!: TranscriptionMetaDto;
}
