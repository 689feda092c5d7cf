import type { AuthenticatedKey, CatalogueModel, ModelPricing } from '@igw/contracts';
import type { RequestContext } from '@igw/http';
import type { RequestHold } from '../limits/request-admission';
import type { DeploymentLease } from '@igw/providers';
import type { ChargedUsage, UsageCharging } from '../usage/usage-charging';
import { tokensOf } from './upstream-estate';

/** Names, on every answer an upstream served, the deployment that served it (`<connection>/<upstream>`). */
export const DEPLOYMENT_HEADER = 'x-gateway-deployment';

/**
 * What the response cache did for a request: `hit`, answered from it (charged at the model's
 * cache prices; `fullPricing` is what the same units would have cost, for the saving the ledger
 * shows); `miss`, looked up, not found, and its answer stored.
 */
export type CacheOutcome = { status: 'hit'; fullPricing: ModelPricing | undefined } | { status: 'miss' };

/** A paid request as admission, charging and telemetry see it. */
export interface PaidCall {
  requestId: string;
  auth: AuthenticatedKey;
  /** The ledger's name for the endpoint, e.g. `chat.completions`. */
  endpoint: string;
  /** The entry as read when the request started: its prices are the ones charged. */
  model: CatalogueModel;
  /** The entry the client named, when it stands for `model` (a floating id and its pinned release): a key's model rule may allow either. */
  namedModel?: CatalogueModel;
  catalogueRevision: number;
  /** The HTTP request's context: what it ran and used goes there for its access-log line. */
  context?: RequestContext;
  /**
   * The deployment its usage is charged to (`<connection>/<upstream>`): the one that answered,
   * or the one whose attempt took the prompt when a failed call is billed by estimate.
   */
  deployment?: string;
  /** Set when the response cache answered it or stores its answer. */
  cache?: CacheOutcome;
}

/** Hears what happens to one admitted request, in order, until it finishes (telemetry: request-telemetry.ts). */
export interface PaidRequestListener {
  /** An upstream attempt starts on `provider`'s `upstreamModel`; `attemptAnswered` or `attemptFailed` follows. */
  attemptStarted(provider: string, upstreamModel: string): void;
  /** The attempt answered: its provider is the request's from then on. */
  attemptAnswered(): void;
  attemptFailed(error: unknown): void;
  /** A stream's first chunk arrived. */
  firstChunk(): void;
  /** Usage was charged: `units` as priced, `credits` as the client's meta.usage says. */
  settled(units: Record<string, number>, credits: number): void;
  finished(): void;
}

/**
 * One admitted request, as the pipeline and the endpoints use it: `attempt` runs its upstream
 * calls, `settle` charges what it used (usage-charging.ts), `finish` gives back its slot and
 * hold (request-admission.ts) counting what was charged as spent, once, however it ended. Its
 * listener hears each of these.
 */
export class AdmittedRequest {
  private finished = false;
  /** The place on the deployment that answered, given back with the tokens used when the request finishes. */
  private lease: DeploymentLease | undefined;
  private usedTokens: number | undefined;

  constructor(
    private readonly call: PaidCall,
    private readonly hold: RequestHold,
    private readonly charging: UsageCharging,
    private readonly listener: PaidRequestListener,
  ) {}

  /**
   * Runs one upstream attempt on `target`: the source that answers is the request's provider
   * from then on, its deployment is named in the access log and the answer's headers, and its
   * `lease` is held until the request finishes.
   */
  async attempt<T>(target: { model: string; definition: { name: string }; deployment: string }, send: () => Promise<T>, lease?: DeploymentLease): Promise<T> {
    const deployment = target.deployment;
    // Before the call: one that fails after its prompt went upstream is billed by estimate, and no other source is tried then.
    this.call.deployment = deployment;
    this.listener.attemptStarted(target.definition.name, target.model);
    let result: T;
    try {
      result = await send();
    } catch (error) {
      this.listener.attemptFailed(error);
      throw error;
    }
    this.answeredBy(deployment);
    this.listener.attemptAnswered();
    if (lease) {
      lease.adopt();
      this.lease = lease;
    }
    return result;
  }

  /** A stream's first chunk arrived (its time to first token). */
  firstChunk(): void {
    this.listener.firstChunk();
  }

  /** Charges `units` at the model's prices of the request's start, and returns meta.usage. */
  settle(units: Record<string, number>): ChargedUsage {
    const charge = this.charging.charge(this.call, units);
    this.usedTokens = (this.usedTokens ?? 0) + tokensOf(units);
    this.hold.spend(charge.creditsMicro);
    this.listener.settled(units, charge.usage.credits_used);
    return charge.usage;
  }

  private answeredBy(deployment: string): void {
    const context = this.call.context;
    if (!context) return;
    context.deployment = deployment;
    const response = context.response;
    // Every endpoint writes its answer, whole or streamed, after its attempt answered; a head already sent is left as it went.
    if (response && !response.headersSent) response.setHeader(DEPLOYMENT_HEADER, headerSafe(deployment));
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.lease?.release(this.usedTokens);
    this.listener.finished();
    this.hold.release();
  }
}

const UNPRINTABLE = /[^\x20-\x7e]/u;
/** Each deployment's header value, made once: the request path only looks it up. */
const headerValues = new Map<string, string>();

/** Printable ASCII as it is; anything else (a catalogue may name an upstream so) percent-encoded as UTF-8, which setHeader would refuse. */
function headerSafe(value: string): string {
  if (!UNPRINTABLE.test(value)) return value;
  let safe = headerValues.get(value);
  if (safe === undefined) {
    safe = value.replace(/[^\x20-\x7e]/gu, (character) => [...Buffer.from(character, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
    if (headerValues.size >= 10_000) headerValues.clear();
    headerValues.set(value, safe);
  }
  return safe;
}
