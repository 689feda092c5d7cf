import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthenticatedKey, CatalogueModel } from '@igw/contracts';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { creditsToMicro, priceUsage } from '@igw/domain';
import type { RequestContext } from '@igw/http';
import { PaidRequestPipeline, type PaidRequest, type RequestPlan, type Units } from '../paid-requests/paid-request-pipeline';
import type { ChargedUsage } from '../usage/usage-charging';
import { cacheDirectives } from './cache-control';
import { hitPricedModel, modelAllowsCache } from './cache-pricing';
import { requestCacheHash } from './cache-request-key';
import { ResponseCache } from './response-cache';
import type { CacheEntryAddress } from './response-cache-store';

/** Names, on every answer of a key whose cache is on, what the cache did: `hit`, `miss` or `bypass`. */
export const CACHE_HEADER = 'x-gateway-cache';

/** A paid request as the cache sees it. */
export interface CacheableRequest {
  auth: AuthenticatedKey;
  /** The request's `Cache-Control` header. */
  cacheControl?: string | string[];
  /** False when its answer cannot repeat (a spoken answer, a stored Responses conversation). */
  cacheable: boolean;
  context?: RequestContext;
}

/** A stored answer's request once admitted: charged at the model's cache prices, given back once. */
export interface AdmittedHit {
  /** Charges the stored answer's units at the cache prices and counts the saving; returns meta.usage. */
  charge(): ChargedUsage;
  release(): void;
}

/** What the cache did for one request: a stored answer to serve, or a miss that may keep its answer. */
export type CacheTurn<T> = { status: 'hit'; answer: T; ageSeconds: number } | { status: 'miss'; keep?: (answer: T) => void } | { status: 'bypass' };

/**
 * The response cache as the endpoints use it: whether a request may use it (the key's
 * settings, the model's rule, the client's Cache-Control), its entry's address, the look-up,
 * the answer's header and the keeping of answers. Never fails a request: a cache that is slow
 * is a miss, one that is down a bypass, an entry it cannot read a miss.
 */
@Injectable()
export class AnswerCache {
  private readonly logger = new Logger('ResponseCache');

  constructor(
    private readonly cache: ResponseCache,
    private readonly pipeline: PaidRequestPipeline,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /**
   * undefined when the cache is off for the request's key: the answer then says nothing of it.
   * `body` is what the answer depends on (requestCacheHash leaves out the fields that only
   * deliver it); `isAnswer` tells a stored value this endpoint can serve.
   */
  async consult<T>(request: CacheableRequest, api: string, model: CatalogueModel, body: object, isAnswer: (value: unknown) => value is T): Promise<CacheTurn<T> | undefined> {
    const settings = request.auth.cache;
    if (!settings) return undefined;
    const directives = cacheDirectives(request.cacheControl);
    if (!request.cacheable || !modelAllowsCache(model) || (!directives.read && !directives.write)) return this.mark<T>(request, { status: 'bypass' });
    const address: CacheEntryAddress = {
      accountId: request.auth.accountId,
      keyId: settings.scope === 'key' ? request.auth.keyId : '',
      writerKeyId: request.auth.keyId,
      model: model.id,
      hash: requestCacheHash(api, model, body),
    };
    const keep = directives.write ? (answer: T) => this.cache.store(address, Buffer.from(JSON.stringify(answer)), settings.ttlSeconds) : undefined;
    if (!directives.read) return this.mark<T>(request, { status: 'miss', keep });
    const found = await this.cache.lookup(address, Math.min(directives.maxAgeSeconds ?? Infinity, settings.maxTtlSeconds));
    if (found.status === 'bypass') return this.mark<T>(request, { status: 'bypass' });
    if (found.status === 'hit') {
      const answer = parsed(found.entry.value, isAnswer);
      if (answer !== undefined) return this.mark<T>(request, { status: 'hit', answer, ageSeconds: found.ageSeconds });
      this.logger.warn(`A response cache entry of account ${request.auth.accountId} could not be read; the request is answered anew and its answer stored again.`);
    }
    return this.mark<T>(request, { status: 'miss', keep });
  }

  /**
   * Admits a request a stored answer serves, like any request of its key (its rates, a slot, a
   * hold of what the hit costs) but sent nowhere, so no deployment's quota: `units` are the
   * stored answer's, priced at the model's cache prices (hitPricedModel), the usage event
   * marked a hit with what it saved.
   */
  async admitHit(request: PaidRequest, plan: Pick<RequestPlan, 'endpoint' | 'model' | 'catalogueRevision' | 'prompt'>, units: Units): Promise<AdmittedHit> {
    const model = hitPricedModel(plan.model);
    const { admitted, release } = await this.pipeline.admitStored(request, {
      endpoint: plan.endpoint,
      model,
      catalogueRevision: plan.catalogueRevision,
      ceiling: units,
      cache: { status: 'hit', fullPricing: plan.model.pricing },
      prompt: plan.prompt,
    });
    return {
      charge: () => {
        const charged = admitted.settle(units);
        const full = priceUsage(plan.model.pricing, units, this.settings.env.CREDITS_PER_USD);
        this.cache.countSaved(full.creditsMicro - creditsToMicro(String(charged.credits_used)));
        return charged;
      },
      release,
    };
  }

  private mark<T>(request: CacheableRequest, turn: CacheTurn<T>): CacheTurn<T> {
    const response = request.context?.response;
    if (response && !response.headersSent) {
      response.setHeader(CACHE_HEADER, turn.status);
      if (turn.status === 'hit') response.setHeader('age', String(turn.ageSeconds));
    }
    return turn;
  }
}

function parsed<T>(value: Buffer, isAnswer: (value: unknown) => value is T): T | undefined {
  try {
    const answer: unknown = JSON.parse(value.toString('utf8'));
    return isAnswer(answer) ? answer : undefined;
  } catch {
    return undefined;
  }
}
