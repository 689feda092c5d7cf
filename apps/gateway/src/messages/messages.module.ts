import { Module } from '@nestjs/common';
import { ChatService } from '../chat/chat.service';
import { GatewayCoreModule } from '../gateway-core.module';
import { MessagesController } from './messages.controller';

/** Anthropic's Messages API: a front of the chat pipeline (ChatService over the shared PaidRequestPipeline). */
@Module({
  imports: [GatewayCoreModule],
  controllers: [MessagesController],
  providers: [ChatService],
})
export class MessagesModule {}
