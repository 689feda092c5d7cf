import { HttpStatus } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ErrorMessages } from '@igw/contracts';
import { type Environment, clientAddressResolver, type ClientConnection } from '@igw/config';
import { GatewayException } from '../errors/gateway.exception';
import { KeyLookupGate, type LookupTicket } from './key-lookup-gate';

/** How long an unknown key is remembered as unknown; creations clear it early by broadcast. */
const NEGATIVE_TTL_MS = 5_000;
/** Unknown keys remembered at most; the oldest go first. */
const NEGATIVE_CACHE_ENTRIES = 4_096;
/** Look-ups waiting for their turn per client address; more get 429 at once. */
const WAITING_LOOKUPS_PER_CLIENT = 64;

type LookupSettings = Pick<
  Environment,
  'RPC_TIMEOUT_MS' | 'KEY_LOOKUPS_IN_FLIGHT' | 'KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT' | 'KEY_LOOKUP_MISS_BURST' | 'KEY_LOOKUP_MISSES_PER_MINUTE' | 'TRUSTED_PROXIES'
>;

/**
 * What keeps a flood of made-up keys from becoming a flood of look-ups, wherever keys are
 * looked up (the gateway asks billing, billing asks its database): keys found unknown are
 * remembered for a while, and look-ups go through a KeyLookupGate that budgets them per client
 * address (behind TRUSTED_PROXIES, the one `X-Forwarded-For` names).
 */
export class KeyLookupBudget {
  /** Hashes of keys found unknown; the owner adds them, and clears one when its key is created. */
  readonly unknown = new LRUCache<string, true>({ max: NEGATIVE_CACHE_ENTRIES, ttl: NEGATIVE_TTL_MS });
  private readonly gate: KeyLookupGate;
  private readonly clientAddressOf: (client: ClientConnection) => string | undefined;

  /** `notAnswering`: the 503 when the look-ups' source is too slow for everyone (`cause` set when it failed). */
  constructor(
    private readonly env: LookupSettings,
    private readonly notAnswering: (cause?: unknown) => GatewayException,
  ) {
    this.gate = new KeyLookupGate({
      inFlight: env.KEY_LOOKUPS_IN_FLIGHT,
      inFlightPerClient: env.KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT,
      waitingPerClient: WAITING_LOOKUPS_PER_CLIENT,
      missBurst: env.KEY_LOOKUP_MISS_BURST,
      missesPerMinute: env.KEY_LOOKUP_MISSES_PER_MINUTE,
    });
    this.clientAddressOf = clientAddressResolver(env.TRUSTED_PROXIES);
  }

  /** The address whose budget a request's look-ups spend. */
  clientOf(connection: ClientConnection | undefined): string {
    return (connection && this.clientAddressOf(connection)) ?? 'unknown';
  }

  /**
   * Runs `ask` when the gate lets it, or refuses at once with 429. `charged`: the key is not
   * known here at all, so the look-up spends the client's budget until it finds the key (an
   * answer other than null). The client is admitted or refused before this returns, so a
   * caller may share the returned promise with later requests for the same key.
   */
  async lookUp<T>(client: string, charged: boolean, ask: () => Promise<T | null>): Promise<T | null> {
    const ticket = this.gate.enter(client, charged);
    if (ticket.refused) throw tooManyLookUps(ticket.retryAfterSeconds);
    let found = false;
    try {
      await this.waitForTurn(ticket);
      const answer = await ask();
      found = answer !== null;
      return answer;
    } finally {
      ticket.finish(found);
    }
  }

  /**
   * Waits for the gate, as long as a look-up is given to answer. Waiting behind the client's own
   * look-ups is the client asking too much at once (429); waiting behind others' is the source
   * being too slow for everyone (503).
   */
  private async waitForTurn(ticket: LookupTicket): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed-out'>((resolve) => (timer = setTimeout(() => resolve('timed-out'), this.env.RPC_TIMEOUT_MS)));
    const outcome = await Promise.race([ticket.turn, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timed-out') {
      const clientBusy = ticket.clientBusy();
      ticket.cancel();
      if (clientBusy) throw tooManyLookUps(1);
      throw this.notAnswering();
    }
  }
}

function tooManyLookUps(retryAfterSeconds: number): GatewayException {
  return new GatewayException(HttpStatus.TOO_MANY_REQUESTS, ErrorMessages.tooManyRequests, { headers: { 'retry-after': String(retryAfterSeconds) } });
}
