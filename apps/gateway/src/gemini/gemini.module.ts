import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { GatewayCoreModule } from '../gateway-core.module';
import { GeminiController } from './gemini.controller';

/** Google's Generative Language API: a front of the chat pipeline (ChatService) and of the embeddings service, over the shared PaidRequestPipeline. */
@Module({
  imports: [GatewayCoreModule, ChatModule, EmbeddingsModule],
  controllers: [GeminiController],
})
export class GeminiModule {}
