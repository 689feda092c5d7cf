import { Module } from '@nestjs/common';
import { ChatService } from '../chat/chat.service';
import { GatewayCoreModule } from '../gateway-core.module';
import { ResponsesController } from './responses.controller';

/** OpenAI's Responses API: a front of the chat pipeline (ChatService over the shared PaidRequestPipeline). */
@Module({
  imports: [GatewayCoreModule],
  controllers: [ResponsesController],
  providers: [ChatService],
})
export class ResponsesModule {}
