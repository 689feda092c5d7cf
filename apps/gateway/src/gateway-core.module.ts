import { Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from '@igw/platform';
import { GatewayKeyAuthenticator } from './auth/gateway-key.authenticator';
import { CatalogueSnapshotService } from './catalogue/catalogue-snapshot.service';
import { limitStoreProvider } from './limits/limit-store.provider';
import { RequestMeter } from './limits/request-meter';
import { TokenCountingShutdown } from './tokens/token-counting.shutdown';
import { PaidRequestPipeline } from './upstream/paid-request-pipeline';
import { UsageRecorder } from './usage/usage-recorder.service';

/**
 * What every paid endpoint stands on: the API-key check, the limits and credit holds, the
 * paid-request pipeline with its pricing and usage recording, the catalogue snapshot and the
 * token counting workers. A feature module imports it for the pipeline, the snapshot and the
 * authenticator its routes' guard asks; the rest stays inside.
 */
@Module({
  providers: [
    CatalogueSnapshotService,
    GatewayKeyAuthenticator,
    { provide: ApiKeyAuthenticator, useExisting: GatewayKeyAuthenticator },
    UsageRecorder,
    limitStoreProvider,
    RequestMeter,
    PaidRequestPipeline,
    TokenCountingShutdown,
  ],
  exports: [ApiKeyAuthenticator, CatalogueSnapshotService, PaidRequestPipeline],
})
export class GatewayCoreModule {}
