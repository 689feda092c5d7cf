import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { CompletionsController } from './completions.controller';
import { CompletionsService } from './completions.service';

/** OpenAI's legacy text completions, on the models whose sources serve them. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [CompletionsController],
  providers: [CompletionsService],
})
export class CompletionsModule {}
