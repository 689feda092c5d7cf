import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { ModelsController } from './models.controller';
import { UpstreamsWorker } from './upstreams-worker';

/** The model list and model cards, read from the catalogue snapshot; and, for billing's console, what this gateway can answer. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [ModelsController],
  providers: [UpstreamsWorker],
})
export class ModelsModule {}
