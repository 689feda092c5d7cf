import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { DecideFailure, DecideJob, DecideReply, DecisionAnswer, DecisionUsage } from '@igw/contracts';
import { fallbacksTaken, registerLogSecrets, timedUpstreamAttempt } from '@igw/observability';
import { requestPathRedisOptions, SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import {
  Cancellation,
  connectionDirectoryFor,
  decisionsAdapterFor,
  DeploymentBalancer,
  DeploymentsBusyError,
  InMemoryDeploymentStore,
  planRoute,
  providerKind,
  RedisDeploymentStore,
  RequestTranslationError,
  timedOutAfterPromptSent,
  UpstreamHttpError,
  UpstreamLimitExceededError,
  UpstreamProtocolError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  type BalancedCall,
  type CancelSignal,
  type RoutePlan,
} from '@igw/providers';
import { contentParts, LogprobFallback } from './fallback/logprob-fallback';

type Target = RoutePlan['targets'][number];

/**
 * Answers one decision: through the sources' decision APIs (System One, OpenAI decisions),
 * or through the chat-logprobs fallback, with the same fallback rules as the gateway's chat
 * calls. Never throws: a failure is a reply the gateway maps to the client's status, with the
 * input tokens still owed for what upstreams processed.
 */
@Injectable()
export class DecideService implements OnModuleDestroy {
  private readonly logger = new Logger(DecideService.name);
  /** The gateway's deployments and their state: with REDIS_URL, the state the gateways share, so quotas and cooldowns count decisions' calls too. */
  private readonly balancer: DeploymentBalancer;

  constructor(@Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings) {
    const env = settings.env;
    const store = env.REDIS_URL ? new RedisDeploymentStore(new Redis(env.REDIS_URL, requestPathRedisOptions(env.REDIS_COMMAND_TIMEOUT_MS)), env.QUEUE_PREFIX) : new InMemoryDeploymentStore();
    this.balancer = new DeploymentBalancer(store, { onRetry: countFallback });
  }

  async onModuleDestroy(): Promise<void> {
    await this.balancer.store.close();
  }

  /** A balanced call of this job: `endpoint` names its tier orders apart from the gateway's. */
  private balanced(job: DecideJob, endpoint: string, tokens: number, signal: CancelSignal): BalancedCall {
    return { group: `${endpoint}|${job.model}`, endpoint, strategy: 'weighted', tokens, leaseMs: job.upstreamTimeoutMs + 60_000, signal };
  }

  async decide(job: DecideJob): Promise<DecideReply> {
    const spent: DecisionUsage = { input_tokens: 0, output_tokens: 0 };
    try {
      const targets = this.targets(job);
      const result = job.via === 'chat-logprobs' ? await this.viaLogprobs(job, targets, spent) : await this.viaDecisionsApi(job, targets, spent);
      return { ok: true, ...result };
    } catch (error) {
      const failure = describeFailure(error);
      if (failure.kind === 'internal') this.logger.error(`Decision ${job.requestId} failed: ${failure.message}`);
      return { ok: false, failure, inputTokensBilled: spent.input_tokens };
    }
  }

  private targets(job: DecideJob): Target[] {
    const env = this.settings.env;
    const limits = { maxResponseBytes: env.UPSTREAM_MAX_RESPONSE_BYTES, maxErrorBytes: env.UPSTREAM_MAX_ERROR_BYTES, maxEventBytes: env.UPSTREAM_MAX_EVENT_BYTES, maxStreamMs: env.UPSTREAM_STREAM_MAX_MS };
    const usable = job.via === 'chat-logprobs' ? job.sources : job.sources.filter((source) => decisionsAdapterFor(source.provider, job.shape) !== undefined);
    const connections = connectionDirectoryFor({ path: this.settings.env.PROVIDERS_FILE, variables: this.settings.providers, environment: process.env, onSecrets: registerLogSecrets }).current;
    const plan = planRoute(usable, connections, limits);
    if (plan.targets.length > 0) return plan.targets;
    const missing = plan.missing.length > 0 ? `Set ${plan.missing.join(' or ')}.` : `No source of ${job.model} offers a decisions API.`;
    throw new UnconfiguredError(`Service Unavailable: no upstream is configured for model '${job.model}'. ${missing}`);
  }

  private async viaDecisionsApi(job: DecideJob, targets: Target[], spent: DecisionUsage): Promise<{ answers: DecisionAnswer[]; usage: DecisionUsage }> {
    // Aborted once an attempt is billed: no other source is tried for a prompt already paid for.
    const billed = new Cancellation();
    const result = await this.balancer.run(
      targets,
      (target) =>
        timedUpstreamAttempt('decisions', target.provider, () =>
          decisionsAdapterFor(target.provider, job.shape)!.decide(target, { body: job.request, questions: job.questions }, { timeoutMs: job.upstreamTimeoutMs }),
        ).catch(
          (error: unknown) => {
            // An answer too large to read was still processed upstream: owed.
            if ((error instanceof UpstreamLimitExceededError && error.upstreamCharged) || timedOutAfterPromptSent(error)) {
              spent.input_tokens = job.estimatedInputTokens;
              billed.abort();
            }
            throw error;
          },
        ),
      this.balanced(job, 'decisions', job.estimatedInputTokens, billed),
    );
    const usage = result.usage ?? { input_tokens: job.estimatedInputTokens, output_tokens: 0 };
    return { answers: result.answers, usage };
  }

  private async viaLogprobs(job: DecideJob, targets: Target[], spent: DecisionUsage): Promise<{ answers: DecisionAnswer[]; usage: DecisionUsage }> {
    const fallback = new LogprobFallback(
      {
        chat: (request) => {
          // Aborted once an attempt is billed (LogprobFallback bills a prompt that timed out upstream).
          const billed = new Cancellation();
          return this.balancer.run(
            targets,
            async (target) => ({
              completion: await timedUpstreamAttempt('decisions', target.provider, () =>
                providerKind(target.definition.kind).chat.chat(target, { ...request, model: target.model }, { timeoutMs: job.upstreamTimeoutMs }),
              ).catch((error: unknown) => {
                if (timedOutAfterPromptSent(error)) billed.abort();
                throw error;
              }),
              provider: target.provider,
            }),
            this.balanced(job, 'decisions.chat', job.estimatedInputTokens, billed),
          );
        },
      },
      contentParts(job.shape, job.request),
    );
    try {
      const answers = await fallback.answer(job.questions);
      return { answers, usage: { ...fallback.usage } };
    } finally {
      spent.input_tokens = fallback.usage.input_tokens;
      spent.output_tokens = fallback.usage.output_tokens;
    }
  }
}

class UnconfiguredError extends Error {}

const fallbackLogger = new Logger('Upstream');

/** Counts a move to the next source; a refusal of the operator's own account is also the operator's to read. */
function countFallback(source: { provider: string }, error: unknown): void {
  fallbacksTaken.inc(fallbacksTaken.series('decisions', source.provider));
  if (error instanceof UpstreamHttpError && error.refusedOperatorAccount) fallbackLogger.error(error.operatorLogLine);
}

/** The failure as plain data for the queue. */
export function describeFailure(error: unknown): DecideFailure {
  if (error instanceof UpstreamHttpError) {
    return { kind: 'http', provider: error.provider, status: error.status, upstreamMessage: error.upstreamMessage, ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}) };
  }
  // Every source cooling on a 429 or over its quota: the gateway answers it as the upstreams' own 429.
  if (error instanceof DeploymentsBusyError) return { kind: 'http', provider: 'gateway', status: 429, upstreamMessage: error.message, retryAfterSeconds: error.retryAfterSeconds };
  if (error instanceof UpstreamTimeoutError) return { kind: 'timeout', provider: error.provider, timeoutMs: error.timeoutMs };
  if (error instanceof UpstreamUnavailableError) return { kind: 'unavailable', provider: error.provider, message: error.message };
  if (error instanceof UpstreamProtocolError) return { kind: 'protocol', provider: error.provider, message: error.message };
  if (error instanceof RequestTranslationError) return { kind: 'translation', message: error.message, ...(error.param ? { param: error.param } : {}) };
  if (error instanceof UnconfiguredError) return { kind: 'unconfigured', message: error.message };
  return { kind: 'internal', message: error instanceof Error ? error.message : String(error) };
}
