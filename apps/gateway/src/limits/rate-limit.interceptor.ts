import { HttpStatus, Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor, type OnApplicationShutdown } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { GatewayException, SERVICE_SETTINGS, type ServiceSettings } from '@igw/platform';
import type { Request } from 'express';
import { finalize, from, switchMap, type Observable } from 'rxjs';
import { InMemoryLimitStore, RedisLimitStore, type LimitStore } from './limit-store';

/**
 * Per API key: requests per minute and requests in flight; per account on the free plan:
 * requests per hour. Over a limit: 429 with `retry-after`. The counters are shared by every
 * gateway replica when REDIS_URL is set, and kept in the process otherwise.
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor, OnApplicationShutdown {
  private readonly store: LimitStore;

  constructor(@Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings) {
    const { REDIS_URL, QUEUE_PREFIX } = settings.env;
    this.store = REDIS_URL ? new RedisLimitStore(REDIS_URL, QUEUE_PREFIX) : new InMemoryLimitStore();
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const auth = context.switchToHttp().getRequest<Request>().context.auth;
    if (!auth) return next.handle();
    const { env } = this.settings;
    const concurrencyKey = `key:${auth.keyId}:running`;
    const admission = {
      perMinute: { key: `key:${auth.keyId}:minute`, limit: auth.limits.requestsPerMinute ?? env.RATE_LIMIT_RPM },
      // A crashed replica's slots free themselves once no request could still be running.
      concurrency: { key: concurrencyKey, limit: auth.limits.concurrentRequests ?? env.RATE_LIMIT_CONCURRENCY, ttlMs: env.UPSTREAM_TIMEOUT_MS + 60_000 },
      freeHourly: auth.plan === 'free' ? { key: `account:${auth.accountId}:hour`, limit: env.FREE_TIER_HOURLY_LIMIT } : undefined,
    };
    return from(this.store.admit(admission, Date.now())).pipe(
      switchMap((result) => {
        if (!result.allowed) {
          const message = result.reason === 'free-hourly' ? ErrorMessages.freeTierExhausted(env.FREE_TIER_HOURLY_LIMIT) : ErrorMessages.tooManyRequests;
          throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, message, { headers: { 'retry-after': String(result.retryAfterSeconds) } });
        }
        return next.handle().pipe(finalize(() => this.store.release(concurrencyKey)));
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
