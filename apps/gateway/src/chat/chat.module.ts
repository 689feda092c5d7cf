import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

/** Chat completions (OpenAI and Azure paths); ChatController.create is also a direct route (DirectRoute). */
@Module({
  imports: [GatewayCoreModule],
  controllers: [ChatController],
  providers: [ChatService],
  // The fronts (Responses, Messages, Gemini) import this module: one ChatService for every chat API.
  exports: [ChatService],
})
export class ChatModule {}
