import { Module } from '@nestjs/common';
import { GatewayCoreModule } from '../gateway-core.module';
import { EmbeddingsController } from './embeddings.controller';
import { EmbeddingsService } from './embeddings.service';

/** Embeddings (OpenAI and Azure paths). */
@Module({
  imports: [GatewayCoreModule],
  controllers: [EmbeddingsController],
  providers: [EmbeddingsService],
  exports: [EmbeddingsService],
})
export class EmbeddingsModule {}
