import { Inject, Injectable } from '@nestjs/common';
import type { AuthenticatedKey, CatalogueModel } from '@igw/contracts';
import { IdleSignal, SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import type { InFlightWork, RequestContext } from '@igw/http';
import type { ModelApi } from '@igw/domain';
import type { CancelSignal } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { assertModelAnswers } from '../catalogue/model-answers';
import { RequestAdmission, type RequestHold } from '../limits/request-admission';
import { RequestTelemetry } from '../telemetry/request-telemetry';
import { UsageCharging } from '../usage/usage-charging';
import { AdmittedRequest, type CacheOutcome, type PaidCall } from './admitted-request';
import { UpstreamCallBilling, type UnreadUsage, type WhenClientLeaves } from './upstream-billing';
import { tokensOf, UpstreamEstate } from './upstream-estate';
import type { UpstreamTarget } from './upstream-route';

/** Usage in the units a model's price list names (`input_tokens`, `images`, `characters`, ...). */
export type Units = Record<string, number>;

/** Who asks, and the signal that says when they leave. */
export interface PaidRequest {
  requestId: string;
  auth: AuthenticatedKey;
  signal: CancelSignal;
  /** The HTTP request's context, when there is one: the access log and metrics read what the request ran there. */
  context?: RequestContext;
  /** Its slot and first hold, when it was admitted in two steps (admitFirst): admission then holds only the rest. */
  firstHold?: RequestHold;
}

/** What an endpoint decided about a request before admission. */
export interface RequestPlan {
  /** The ledger's name of the endpoint (`chat.completions`, `embeddings`, ...). */
  endpoint: string;
  /** The endpoint whose deployments' turns (a weighted tier's round robin) the request takes, when not its own: API fronts over chat share chat's. */
  fallbackGroup?: string;
  /** The entry whose prices are charged, as read when the request started. */
  model: CatalogueModel;
  /** The entry the client named, when another one answers for it (a floating id's pinned release). */
  namedModel?: CatalogueModel;
  catalogueRevision: number;
  /** The most the request can cost, in the model's priced units: held until it finishes. */
  ceiling: Units;
  /** The sources to try (for steps that `send` to a source), tiers and weights as the catalogue says. */
  targets?: readonly UpstreamTarget[];
  /**
   * What becomes of the upstream call when its client leaves after the prompt was sent
   * (upstream-billing.ts): a stream stops with its client; by default a call runs on for at
   * most UPSTREAM_TIMEOUT_MS, to be billed for what the upstream reports.
   */
  whenClientLeaves?: WhenClientLeaves;
  /** The request's prompt, for its access-log line when LOG_PROMPTS=true (kept only then). */
  prompt?: unknown;
  /** What the response cache did for it, when it took part: the usage event says so. */
  cache?: CacheOutcome;
}

interface CallSteps {
  /**
   * After admission, before anything is sent: checks that cost tokenizer time or I/O, so a key
   * that cannot pay costs none. A request they refuse never reaches an upstream.
   */
  beforeCall?(): void | Promise<void>;
  /**
   * Billed when the call fails after an upstream processed the request and its usage cannot be
   * read (upstream-billing.ts); undefined bills nothing. A Promise when it is counted in the
   * token counting workers.
   */
  unreadUnits(unread: Exclude<UnreadUsage, 'none'>): Units | undefined | Promise<Units | undefined>;
}

/** The endpoint's part of the upstream call: an attempt on one of the plan's targets, with fallback... */
export interface FallbackSteps<T> extends CallSteps {
  send(target: UpstreamTarget, signal: CancelSignal): Promise<T>;
}

/** ...or one call to another service that does its own routing (decisions, over the queue). */
export interface ForwardSteps<T> extends CallSteps {
  forward(signal: CancelSignal): Promise<T>;
}

export type UpstreamSteps<T> = FallbackSteps<T> | ForwardSteps<T>;

export type PaidSteps<T, R> = UpstreamSteps<T> & AnswerSteps<T, R>;

interface AnswerSteps<T, R> {
  /**
   * Prices what the answer used (`admitted.settle`, which also journals it for the ledger) and
   * makes the client's answer; a Promise when the usage is counted in the token counting workers.
   */
  settle(result: T, admitted: AdmittedRequest): R | Promise<R>;
  /**
   * Sends the answer just after the request's slot and hold are given back, in the same turn
   * of the event loop: the client cannot send its next request before they are free.
   */
  deliver?(answer: R, clientGone: boolean): void;
}

/** An upstream call that went on past `open`: the caller reads it and calls `release` once, when it is over. */
export interface OpenedCall<T> {
  result: T;
  admitted: AdmittedRequest;
  release(): void;
}

/**
 * The steps every paid endpoint runs, in one place: resolve the model, admit (rate limits and
 * credits, holding the most the request can cost), call the upstream with fallback under the
 * billing rule for clients that leave, price and journal the usage, answer, and give the slot
 * and hold back however it ended. Endpoints bring what is their own: validation, the ceiling,
 * the adapter call, and the units an answer used.
 */
@Injectable()
export class PaidRequestPipeline implements InFlightWork {
  /** Calls admitted and not over yet, calls run on after their client left included: what a shutdown waits for. */
  private readonly calls = new Set<UpstreamCallBilling>();
  private readonly idle = new IdleSignal();

  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    private readonly admission: RequestAdmission,
    private readonly charging: UsageCharging,
    private readonly telemetry: RequestTelemetry,
    private readonly estate: UpstreamEstate,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /**
   * The catalogue entry a request to `api` names (id or alias), with the revision it was read at:
   * 404 for an unknown name, 400 for a model `api` does not answer (assertModelAnswers).
   */
  resolveModel(name: string, api: ModelApi): { model: CatalogueModel; revision: number } {
    const resolved = this.catalogue.resolveModel(name);
    assertModelAnswers(resolved.model, api);
    return resolved;
  }

  /**
   * The first step of a two-step admission, for a request whose full cost is known only after
   * work that must not run for a key that cannot be let in (a stored conversation's look-up, its
   * translation): the key's model rule, rate limits and slot, and a first hold of `units`, now;
   * the rest of its cost when it runs (`PaidRequest.firstHold`). The caller releases the hold
   * (idempotent) once the request is over, or if it never runs.
   */
  admitFirst(request: Pick<PaidRequest, 'requestId' | 'auth' | 'context'>, endpoint: string, resolved: { model: CatalogueModel; revision: number }, units: Units): Promise<RequestHold> {
    if (request.context) request.context.model = resolved.model.id;
    return this.admission.admit(this.paidCall(request, { endpoint, model: resolved.model, catalogueRevision: resolved.revision }), units);
  }

  /**
   * A request that costs nothing but is work for the gateway or billing (a stored response's
   * read or delete, a token count): its key's rates and a slot in flight, no money held. The
   * caller releases it when the work is done.
   */
  admitUnpaid(request: Pick<PaidRequest, 'requestId' | 'auth'>): Promise<RequestHold> {
    return this.admission.admitUnpaid(request.auth, request.requestId);
  }

  /** Runs a request whose answer comes back whole. */
  async run<T, R>(request: PaidRequest, plan: RequestPlan, steps: PaidSteps<T, R>): Promise<R> {
    const admitted = await this.admit(request, plan);
    const billing = this.startCall(request, plan);
    let answer: R;
    try {
      const settled = steps.settle(await this.call(plan, steps, billing, admitted), admitted);
      answer = settled instanceof Promise ? await settled : settled;
    } finally {
      this.endCall(billing);
      admitted.finish();
    }
    steps.deliver?.(answer, billing.clientGone);
    return answer;
  }

  /**
   * Runs a request whose answer is read after this returns (a stream): the call is opened on
   * the first source that takes it, and the caller settles through `admitted` and calls
   * `release` when the answer is over, however it ended. A failure to open releases itself.
   */
  async open<T>(request: PaidRequest, plan: RequestPlan, steps: UpstreamSteps<T>): Promise<OpenedCall<T>> {
    const admitted = await this.admit(request, plan);
    const billing = this.startCall(request, plan);
    const release = () => {
      this.endCall(billing);
      admitted.finish();
    };
    try {
      return { result: await this.call(plan, steps, billing, admitted), admitted, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Admits a request answered from the response cache: its key's rates, a slot and a hold of
   * the plan's ceiling (the stored answer's units at the cache prices), and no upstream, so no
   * deployment's quota. The caller settles through `admitted` and calls `release` once.
   */
  async admitStored(request: PaidRequest, plan: RequestPlan): Promise<{ admitted: AdmittedRequest; release(): void }> {
    const admitted = await this.admit(request, plan);
    return { admitted, release: () => admitted.finish() };
  }

  running(): number {
    return this.calls.size;
  }

  /** Resolves true once no call is running, false if `deadline` (epoch ms) comes first. */
  settled(deadline: number): Promise<boolean> {
    return this.idle.settled(this.calls.size === 0, deadline);
  }

  /** Shutdown, past the drain time: every running call ends now and is billed as abandoned (upstream-billing.ts). */
  cutOff(): void {
    for (const billing of this.calls) billing.cutOff();
  }

  private startCall(request: PaidRequest, plan: RequestPlan): UpstreamCallBilling {
    const billing = new UpstreamCallBilling(request.signal, plan.whenClientLeaves ?? { runsOnMs: this.settings.env.UPSTREAM_TIMEOUT_MS });
    this.calls.add(billing);
    return billing;
  }

  private endCall(billing: UpstreamCallBilling): void {
    billing.close();
    if (this.calls.delete(billing) && this.calls.size === 0) this.idle.idle();
  }

  /** Admission holds the request's slot and credits; charging and telemetry follow it from there. */
  private async admit(request: PaidRequest, plan: RequestPlan): Promise<AdmittedRequest> {
    const { context } = request;
    if (context) {
      context.model = plan.model.id;
      if (this.settings.env.LOG_PROMPTS) context.prompt = plan.prompt;
    }
    const call = this.paidCall(request, plan);
    const hold = request.firstHold ? await this.admission.holdRest(request.firstHold, call, plan.ceiling) : await this.admission.admit(call, plan.ceiling);
    return new AdmittedRequest(call, hold, this.charging, this.telemetry.admitted(call));
  }

  private paidCall(request: Pick<PaidRequest, 'requestId' | 'auth' | 'context'>, plan: Pick<RequestPlan, 'endpoint' | 'model' | 'namedModel' | 'catalogueRevision' | 'cache'>): PaidCall {
    return {
      requestId: request.requestId,
      auth: request.auth,
      endpoint: plan.endpoint,
      model: plan.model,
      namedModel: plan.namedModel,
      catalogueRevision: plan.catalogueRevision,
      context: request.context,
      ...(plan.cache ? { cache: plan.cache } : {}),
    };
  }

  private async call<T>(plan: RequestPlan, steps: UpstreamSteps<T>, billing: UpstreamCallBilling, admitted: AdmittedRequest): Promise<T> {
    const checked = steps.beforeCall?.();
    if (checked) await checked;
    let unread: Exclude<UnreadUsage, 'none'> | undefined;
    try {
      return await this.callUpstream(plan, steps, billing, admitted, (found) => (unread = found));
    } finally {
      const counted = unread ? steps.unreadUnits(unread) : undefined;
      const units = counted instanceof Promise ? await counted : counted;
      if (units) admitted.settle(units);
    }
  }

  private callUpstream<T>(
    plan: RequestPlan,
    steps: UpstreamSteps<T>,
    billing: UpstreamCallBilling,
    admitted: AdmittedRequest,
    billUnread: (unread: Exclude<UnreadUsage, 'none'>) => void,
  ): Promise<T> {
    if ('forward' in steps) return billing.callOnce(steps.forward, billUnread);
    if (!plan.targets) throw new Error(`${plan.endpoint}: a plan that sends to sources needs its targets`);
    const targets = plan.targets;
    return billing.callWithFallback(
      (attempt, signal) => this.estate.run(targets, attempt, { model: plan.model, group: plan.fallbackGroup ?? plan.endpoint, tokens: tokensOf(plan.ceiling), signal }),
      (target, lease, signal) => admitted.attempt(target, () => steps.send(target, signal), lease),
      billUnread,
    );
  }
}
