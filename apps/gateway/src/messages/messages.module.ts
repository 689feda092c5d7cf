import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { GatewayCoreModule } from '../gateway-core.module';
import { MessagesController } from './messages.controller';

/** Anthropic's Messages API: a front of the chat pipeline (ChatService over the shared PaidRequestPipeline). */
@Module({
  imports: [GatewayCoreModule, ChatModule],
  controllers: [MessagesController],
})
export class MessagesModule {}
