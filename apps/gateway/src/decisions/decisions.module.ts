import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { DecisionsController } from './decisions.controller';
import { DecisionsService } from './decisions.service';

/** Decisions: validated and admitted here, answered by the decisions service over the queue. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [DecisionsController],
  providers: [DecisionsService],
})
export class DecisionsModule {}
