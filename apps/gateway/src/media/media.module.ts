import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { HostedImages } from './hosted-images';
import { ImagesController } from './images.controller';
import { OpenAiAudioController } from './openai-audio.controller';
import { ImagesService } from './images.service';
import { MediaFetcher } from './media-fetcher';
import { SpeechController } from './speech.controller';
import { SpeechService } from './speech.service';
import { TranscriptionController } from './transcription.controller';
import { TranscriptionService } from './transcription.service';

/** Images, text to speech and speech to text, in the gateway's shapes and OpenAI's; the fetcher of media given by URL is theirs alone. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [SpeechController, ImagesController, TranscriptionController, OpenAiAudioController],
  providers: [SpeechService, MediaFetcher, ImagesService, TranscriptionService, HostedImages],
})
export class MediaModule {}
