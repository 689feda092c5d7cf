import { Module } from '@nestjs/common';
import { ChatService } from '../chat/chat.service';
import { EmbeddingsService } from '../embeddings/embeddings.service';
import { GatewayCoreModule } from '../gateway-core.module';
import { GeminiController } from './gemini.controller';

/** Google's Generative Language API: a front of the chat pipeline (ChatService) and of the embeddings service, over the shared PaidRequestPipeline. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [GeminiController],
  providers: [ChatService, EmbeddingsService],
})
export class GeminiModule {}
