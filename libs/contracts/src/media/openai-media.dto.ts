import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Checked, IsNumberField, IsOneOf, IsStringField, NullMeansAbsent, describeWrongType, describeWrongValue } from '@igw/validation';
import { IMAGE_BACKGROUNDS, IMAGE_OUTPUT_FORMATS, IMAGE_QUALITIES, ImageField, MAX_IMAGE_PROMPT_CHARACTERS } from './image-generation-request.dto';
import { IsTextOfAtMost, PROVIDER_FIELD_DESCRIPTION } from './media-fields';
import { MAX_SPEECH_CHARACTERS, SPEECH_AUDIO_FORMATS, VOICE_PATTERN, type SpeechAudioFormat } from './speech-request.dto';

// OpenAI's own bodies of its audio and image-edit routes, so its SDKs work unchanged. The
// multipart forms arrive as text fields: the routes turn the numeric ones into numbers
// (`MULTIPART_NUMBER_FIELDS`) before these DTOs check them, so the messages are the JSON ones.

/** The answer formats of OpenAI's transcriptions and translations. */
export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];
export const TIMESTAMP_GRANULARITIES = ['word', 'segment'] as const;
/** OpenAI's limit on `instructions` of a speech request. */
export const MAX_SPEECH_INSTRUCTIONS = 4096;
/** GPT Image takes up to 16 images in one edit. */
export const MAX_EDIT_IMAGES = 16;
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/** Form fields of each multipart route that are numbers in the DTO. */
export const MULTIPART_NUMBER_FIELDS = { transcription: ['temperature'], imageEdit: ['n'] } as const;

/** The body of POST /v1/audio/speech (OpenAI's `client.audio.speech.create`). The answer is the audio bytes. */
export class OpenAiSpeechRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue id or alias of a text-to-speech model', example: 'tts-1' })
  model!: string;

  @ApiProperty({ description: `The text to speak: at most ${MAX_SPEECH_CHARACTERS} characters, each billed at the model's per-character price`, example: 'Hello! Your order has shipped.' })
  @IsTextOfAtMost(MAX_SPEECH_CHARACTERS)
  input!: string;

  @ApiPropertyOptional({ description: "The provider's voice (OpenAI `alloy` by default; Deepgram Aura `thalia`, ...)", example: 'alloy' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ pattern: VOICE_PATTERN, patternText: '1-64 letters, digits, underscores, dashes or dots, starting with a letter or digit' })
  voice?: string;

  @ApiPropertyOptional({ description: `How to speak (gpt-4o-mini-tts), at most ${MAX_SPEECH_INSTRUCTIONS} characters; sent to OpenAI-format sources only, free of charge`, example: 'Cheerful and quick.' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ maxLength: MAX_SPEECH_INSTRUCTIONS })
  instructions?: string;

  @ApiPropertyOptional({ enum: SPEECH_AUDIO_FORMATS, default: 'mp3', description: 'Audio encoding of the answer (OpenAI\'s default: mp3; `pcm`: raw 24 kHz 16-bit little-endian samples)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(SPEECH_AUDIO_FORMATS)
  response_format?: SpeechAudioFormat;

  @ApiPropertyOptional({ minimum: 0.25, maximum: 4, default: 1, description: 'Playback speed, where the provider supports it (OpenAI)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ min: 0.25, max: 4 })
  speed?: number;

  @ApiPropertyOptional({ enum: ['audio'], default: 'audio', description: "`audio`: the audio bytes in the answer. OpenAI's `sse` (audio in server-sent events) is refused with a 400" })
  @NullMeansAbsent()
  @IsOptional()
  @Checked('streamFormat', (value) =>
    value === 'audio' ? [] : [`Expected 'audio' (the audio bytes in the answer): speech as server-sent events ('sse') is not served. Received ${typeof value === 'string' ? describeWrongValue(value) : describeWrongType(value)}`],
  )
  stream_format?: 'audio';

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}

function granularityIssues(value: unknown): string[] {
  const expected = `an array of ${TIMESTAMP_GRANULARITIES.map((item) => `'${item}'`).join(' and ')}`;
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items) || items.length > TIMESTAMP_GRANULARITIES.length) return [`Expected ${expected}. Received ${describeWrongType(value)}`];
  const wrong = items.find((item) => !(TIMESTAMP_GRANULARITIES as readonly unknown[]).includes(item));
  return wrong === undefined ? [] : [`Expected ${expected}. Received ${describeWrongValue(wrong)}`];
}

/**
 * The text fields of POST /v1/audio/transcriptions and /v1/audio/translations (a multipart form
 * whose `file` part is the audio, at most MEDIA_FETCH_MAX_BYTES).
 */
export class OpenAiTranscriptionFormDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The audio file (WAV, MP3, FLAC, OGG, M4A, WebM...), at most MEDIA_FETCH_MAX_BYTES (25 MiB)' })
  file?: unknown;

  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue id or alias of a speech-to-text model', example: 'whisper-1' })
  model!: string;

  @ApiPropertyOptional({ description: 'ISO-639-1 language of the audio (e.g. `en`); transcriptions only (a translation is always English)', example: 'en' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ pattern: LANGUAGE, patternText: "a language code such as 'en' or 'pt-BR'" })
  language?: string;

  @ApiPropertyOptional({ description: 'Spelling or context hints, at most 1,000 characters' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ maxLength: 1000 })
  prompt?: string;

  @ApiPropertyOptional({ enum: TRANSCRIPT_FORMATS, default: 'json', description: 'json `{text, usage}`; text, srt and vtt as text/plain; verbose_json with duration, language, segments (and words when asked)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(TRANSCRIPT_FORMATS)
  response_format?: TranscriptFormat;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'Sampling temperature (OpenAI-format sources)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ min: 0, max: 1 })
  temperature?: number;

  @ApiPropertyOptional({ type: [String], enum: TIMESTAMP_GRANULARITIES, description: 'With verbose_json: `word` adds `words`, `segment` (the default) `segments`; sent as `timestamp_granularities[]`' })
  @NullMeansAbsent()
  @IsOptional()
  @Checked('timestampGranularities', (value) => granularityIssues(value))
  timestamp_granularities?: Array<(typeof TIMESTAMP_GRANULARITIES)[number]> | (typeof TIMESTAMP_GRANULARITIES)[number];

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}

/** The text fields of POST /v1/images/edits (a multipart form with `image` or `image[]`, and `mask`). */
export class OpenAiImageEditFormDto {
  @ApiProperty({ type: 'string', format: 'binary', description: `The image to edit (PNG, JPEG or WebP); several as \`image[]\` (GPT Image: up to ${MAX_EDIT_IMAGES}), each at most MEDIA_FETCH_MAX_BYTES` })
  image?: unknown;

  @ApiPropertyOptional({ type: 'string', format: 'binary', description: 'A PNG whose transparent pixels mark where to draw, the size of the first image' })
  mask?: unknown;

  @ImageField.model({ description: 'A catalogue id or alias of an image model whose source edits (GPT Image, DALL·E 2)', example: 'gpt-image-1' })
  model!: string;

  @ImageField.prompt({ description: `What the edited image should show (at most ${MAX_IMAGE_PROMPT_CHARACTERS} characters)`, example: 'Add a red hat' })
  prompt!: string;

  @ImageField.n()
  n?: number;

  @ImageField.size({ description: '`WIDTHxHEIGHT` or `auto`', example: '1024x1024' })
  size?: string;

  @ImageField.quality()
  quality?: (typeof IMAGE_QUALITIES)[number];

  @ImageField.responseFormat({ description: "`url`: a link valid for an hour (the upstream's, else one the gateway signs and serves)" })
  response_format?: 'b64_json' | 'url';

  @ImageField.outputFormat()
  output_format?: (typeof IMAGE_OUTPUT_FORMATS)[number];

  @ImageField.background()
  background?: (typeof IMAGE_BACKGROUNDS)[number];

  @ApiPropertyOptional({ enum: ['high', 'low'], description: 'GPT Image: how closely to keep the input images' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(['high', 'low'])
  input_fidelity?: 'high' | 'low';

  @ImageField.user({ description: 'An end-user id, forwarded to OpenAI-format upstreams' })
  user?: string;

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}
