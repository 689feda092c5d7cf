import { Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from '@igw/http';
import { GatewayKeyAuthenticator } from './auth/gateway-key.authenticator';
import { CatalogueSnapshotService } from './catalogue/catalogue-snapshot.service';
import { limitStoreProvider } from './limits/limit-store.provider';
import { RequestAdmission } from './limits/request-admission';
import { PaidRequestPipeline } from './paid-requests/paid-request-pipeline';
import { deploymentStoreProvider, UpstreamEstate } from './paid-requests/upstream-estate';
import { AnswerCache } from './response-cache/answer-cache';
import { ResponseCacheModule } from './response-cache/response-cache.module';
import { RequestTelemetry } from './telemetry/request-telemetry';
import { TokenCountingShutdown } from './tokens/token-counting.shutdown';
import { UsageCharging } from './usage/usage-charging';
import { UsageRecorder } from './usage/usage-recorder.service';

/**
 * What every paid endpoint stands on: the API-key check, the paid-request pipeline and the
 * three it composes for each admitted request (admission: limits and credit holds; charging:
 * pricing and usage recording for the ledger; telemetry: metrics and spans), the catalogue
 * snapshot, the token counting workers and the response cache (AnswerCache). A feature module imports it for the pipeline, the
 * snapshot and the authenticator its routes' guard asks; the rest stays inside.
 */
@Module({
  imports: [ResponseCacheModule],
  providers: [
    CatalogueSnapshotService,
    GatewayKeyAuthenticator,
    { provide: ApiKeyAuthenticator, useExisting: GatewayKeyAuthenticator },
    UsageRecorder,
    limitStoreProvider,
    RequestAdmission,
    UsageCharging,
    RequestTelemetry,
    deploymentStoreProvider,
    UpstreamEstate,
    PaidRequestPipeline,
    TokenCountingShutdown,
    AnswerCache,
  ],
  exports: [ApiKeyAuthenticator, CatalogueSnapshotService, PaidRequestPipeline, UpstreamEstate, AnswerCache],
})
export class GatewayCoreModule {}
