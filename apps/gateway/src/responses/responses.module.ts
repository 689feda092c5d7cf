import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { GatewayCoreModule } from '../gateway-core.module';
import { ResponsesController } from './responses.controller';
import { StoredResponses } from './stored-responses';
import { StoredResponsesController } from './stored-responses.controller';

/** OpenAI's Responses API: a front of the chat pipeline (ChatService over the shared PaidRequestPipeline), with stored responses kept by billing. */
@Module({
  imports: [GatewayCoreModule, ChatModule],
  controllers: [ResponsesController, StoredResponsesController],
  providers: [StoredResponses],
})
export class ResponsesModule {}
