import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { ModerationsController } from './moderations.controller';
import { ModerationsService } from './moderations.service';

/** OpenAI's moderation API on the catalogue's moderation models. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [ModerationsController],
  providers: [ModerationsService],
})
export class ModerationsModule {}
