import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

/** Chat completions (OpenAI and Azure paths); the fast path (chat-direct-route.ts) serves most of them with the same service. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [ChatController],
  providers: [ChatService],
  // The fronts (Responses, Messages, Gemini) import this module: one ChatService for every chat API.
  exports: [ChatService],
})
export class ChatModule {}
