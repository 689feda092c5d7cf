import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { ModelsController } from './models.controller';

/** The model list and model cards, read from the catalogue snapshot. */
@Module({
  imports: [GatewayCoreModule],
  controllers: [ModelsController],
})
export class ModelsModule {}
