import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { ImagesController } from './images.controller';
import { ImagesService } from './images.service';
import { MediaFetcher } from './media-fetcher';
import { SpeechController } from './speech.controller';
import { SpeechService } from './speech.service';
import { TranscriptionController } from './transcription.controller';
import { TranscriptionService } from './transcription.service';

/** Images, text to speech and speech to text; the fetcher of media given by URL is theirs alone. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [SpeechController, ImagesController, TranscriptionController],
  providers: [SpeechService, MediaFetcher, ImagesService, TranscriptionService],
})
export class MediaModule {}
