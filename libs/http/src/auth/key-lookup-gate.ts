export interface KeyLookupGateOptions {
  /** Look-ups at billing at once, all clients together. */
  inFlight: number;
  /** Look-ups at billing at once for one client address. */
  inFlightPerClient: number;
  /** Look-ups waiting for their turn per client address; more are refused. */
  waitingPerClient: number;
  /** Charged look-ups (of keys not known here) a client may make in a burst... */
  missBurst: number;
  /** ...and how fast that budget comes back. */
  missesPerMinute: number;
  /** Client addresses remembered at most; idle ones are forgotten first. */
  maxClients?: number;
}

/** Why a look-up was not let through, and when the client may try again. */
export interface LookupRefusal {
  refused: true;
  retryAfterSeconds: number;
}

/** A look-up let through the gate: it waits for `turn`, then asks billing, then calls `finish`. */
export interface LookupTicket {
  refused: false;
  /** Resolves when the look-up may ask billing. */
  turn: Promise<void>;
  /** The look-up is over; a charged look-up that found its key gets its budget back. */
  finish(found: boolean): void;
  /** Gives up waiting for the turn (or, once it came, is the same as finish(false)). */
  cancel(): void;
  /** Whether the client's own look-ups are at billing now (so its own pace is what keeps this one waiting). */
  clientBusy(): boolean;
}

interface ClientState {
  tokens: number;
  refilledAt: number;
  inFlight: number;
  waiting: Ticket[];
}

interface Ticket {
  client: ClientState;
  charged: boolean;
  state: 'waiting' | 'granted' | 'done';
  grant(): void;
}

const DEFAULT_MAX_CLIENTS = 10_000;

/**
 * Decides when a key look-up may go to billing. Each client address has a budget of look-ups
 * that find no key (a token bucket: a look-up takes a token, one that finds its key gives it
 * back), so made-up keys cost their sender 429s instead of costing billing look-ups, while
 * clients with real keys are never throttled. Look-ups in flight are capped per address and
 * per process; when the caps are reached, waiting addresses take turns, so a flood from one
 * address delays another address's new key by at most one look-up. Written here because no
 * installed library does this (a bucket that refunds found keys, fair turns between addresses,
 * and forgetting only idle addresses, which lru-cache's eviction would not respect).
 */
export class KeyLookupGate {
  private readonly clients = new Map<string, ClientState>();
  /** Addresses with look-ups waiting, in the order they get their next turn. */
  private readonly rotation = new Set<ClientState>();
  private inFlight = 0;
  private readonly msPerToken: number;

  constructor(
    private readonly options: KeyLookupGateOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.msPerToken = 60_000 / options.missesPerMinute;
  }

  /**
   * Lets a look-up in (it then waits for its turn) or refuses it at once. `charged`: the key is
   * not known here at all, so the look-up spends the client's budget until it finds the key.
   */
  enter(clientAddress: string, charged: boolean): LookupRefusal | LookupTicket {
    const client = this.clientOf(clientAddress);
    this.refill(client);
    if (charged && client.tokens < 1) return { refused: true, retryAfterSeconds: this.secondsUntilToken(client) };
    if (client.waiting.length >= this.options.waitingPerClient) return { refused: true, retryAfterSeconds: 1 };
    if (charged) client.tokens -= 1;

    let grant!: () => void;
    const turn = new Promise<void>((resolve) => (grant = resolve));
    const ticket: Ticket = {
      client,
      charged,
      state: 'waiting',
      grant: () => {
        ticket.state = 'granted';
        client.inFlight++;
        this.inFlight++;
        grant();
      },
    };
    if (this.hasRoomFor(client)) ticket.grant();
    else {
      client.waiting.push(ticket);
      this.rotation.add(client);
    }
    return {
      refused: false,
      turn,
      finish: (found) => this.finish(ticket, found),
      cancel: () => {
        if (ticket.state === 'waiting') {
          ticket.state = 'done';
          client.waiting.splice(client.waiting.indexOf(ticket), 1);
          if (client.waiting.length === 0) this.rotation.delete(client);
          // It never reached billing: the budget it took goes back.
          if (charged) this.giveBack(client);
        } else this.finish(ticket, false);
      },
      clientBusy: () => client.inFlight > 0,
    };
  }

  /** Look-ups at billing now (for tests and diagnostics). */
  get lookUpsInFlight(): number {
    return this.inFlight;
  }

  private finish(ticket: Ticket, found: boolean): void {
    if (ticket.state !== 'granted') return;
    ticket.state = 'done';
    ticket.client.inFlight--;
    this.inFlight--;
    if (ticket.charged && found) this.giveBack(ticket.client);
    this.grantNext();
  }

  private grantNext(): void {
    while (this.inFlight < this.options.inFlight) {
      let next: ClientState | undefined;
      for (const client of this.rotation) {
        if (client.inFlight < this.options.inFlightPerClient) {
          next = client;
          break;
        }
      }
      if (!next) return;
      const ticket = next.waiting.shift()!;
      // To the back of the line: every waiting address gets a turn before this one's next.
      this.rotation.delete(next);
      if (next.waiting.length > 0) this.rotation.add(next);
      ticket.grant();
    }
  }

  private hasRoomFor(client: ClientState): boolean {
    return this.inFlight < this.options.inFlight && client.inFlight < this.options.inFlightPerClient && client.waiting.length === 0;
  }

  private refill(client: ClientState): void {
    const now = this.now();
    const earned = (now - client.refilledAt) / this.msPerToken;
    client.tokens = Math.min(this.options.missBurst, client.tokens + earned);
    client.refilledAt = now;
  }

  private giveBack(client: ClientState): void {
    client.tokens = Math.min(this.options.missBurst, client.tokens + 1);
  }

  private secondsUntilToken(client: ClientState): number {
    return Math.max(1, Math.ceil(((1 - client.tokens) * this.msPerToken) / 1000));
  }

  private clientOf(address: string): ClientState {
    let client = this.clients.get(address);
    if (client) {
      // Most recently seen last, so the oldest are found first when forgetting.
      this.clients.delete(address);
      this.clients.set(address, client);
      return client;
    }
    if (this.clients.size >= (this.options.maxClients ?? DEFAULT_MAX_CLIENTS)) this.forgetIdleClients();
    client = { tokens: this.options.missBurst, refilledAt: this.now(), inFlight: 0, waiting: [] };
    this.clients.set(address, client);
    return client;
  }

  /**
   * Forgets addresses with nothing in flight or waiting, those with a full budget first (they lose
   * nothing), then the least recently seen. A forgotten address starts again with a full budget;
   * billing stays protected by the in-flight caps.
   */
  private forgetIdleClients(): void {
    // Room for a tenth more, so a stream of new addresses does not pay for this scan each time.
    const limit = Math.floor((this.options.maxClients ?? DEFAULT_MAX_CLIENTS) * 0.9);
    const idle = (client: ClientState) => client.inFlight === 0 && client.waiting.length === 0;
    for (const [address, client] of this.clients) {
      this.refill(client);
      if (idle(client) && client.tokens >= this.options.missBurst) this.clients.delete(address);
    }
    for (const [address, client] of this.clients) {
      if (this.clients.size < limit) return;
      if (idle(client)) this.clients.delete(address);
    }
  }
}
