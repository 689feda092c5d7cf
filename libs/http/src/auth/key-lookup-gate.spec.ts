import { KeyLookupGate, type KeyLookupGateOptions, type LookupRefusal, type LookupTicket } from './key-lookup-gate';

const OPTIONS: KeyLookupGateOptions = { inFlight: 4, inFlightPerClient: 2, waitingPerClient: 3, missBurst: 3, missesPerMinute: 60 };

function gateAt(options: Partial<KeyLookupGateOptions> = {}) {
  const clock = { now: 1_000_000 };
  const gate = new KeyLookupGate({ ...OPTIONS, ...options }, () => clock.now);
  return { gate, clock };
}

function admitted(entry: LookupRefusal | LookupTicket): LookupTicket {
  if (entry.refused) throw new Error(`refused, retry after ${entry.retryAfterSeconds} s`);
  return entry;
}

/** Which of the tickets have their turn now (turns resolve on the microtask queue). */
async function granted(tickets: LookupTicket[]): Promise<boolean[]> {
  const seen = tickets.map(() => false);
  tickets.forEach((ticket, i) => void ticket.turn.then(() => (seen[i] = true)));
  await new Promise((resolve) => setImmediate(resolve));
  return seen;
}

describe('KeyLookupGate', () => {
  it('refuses a client over its budget of look-ups that find nothing, with the seconds until the next one', () => {
    const { gate, clock } = gateAt({ inFlightPerClient: 10, inFlight: 10, waitingPerClient: 10 });
    for (let i = 0; i < 3; i++) admitted(gate.enter('10.0.0.1', true)).finish(false);
    expect(gate.enter('10.0.0.1', true)).toEqual({ refused: true, retryAfterSeconds: 1 });
    // Another address has its own budget.
    expect(gate.enter('10.0.0.2', true).refused).toBe(false);
    clock.now += 1_000;
    admitted(gate.enter('10.0.0.1', true)).finish(false);
    expect(gate.enter('10.0.0.1', true).refused).toBe(true);
  });

  it('gives the budget back for look-ups that found their key, and never charges refreshes of known keys', () => {
    const { gate } = gateAt({ inFlightPerClient: 10, inFlight: 10, waitingPerClient: 10 });
    for (let i = 0; i < 50; i++) admitted(gate.enter('10.0.0.1', true)).finish(true);
    for (let i = 0; i < 3; i++) admitted(gate.enter('10.0.0.1', true)).finish(false);
    for (let i = 0; i < 50; i++) admitted(gate.enter('10.0.0.1', false)).finish(false);
    expect(gate.enter('10.0.0.1', true).refused).toBe(true);
  });

  it('caps look-ups in flight per client and in all, and gives turns to waiting clients in rotation', async () => {
    const { gate } = gateAt({ missBurst: 100 });
    const flood = [0, 1, 2, 3, 4].map(() => admitted(gate.enter('10.0.0.1', true)));
    expect(gate.enter('10.0.0.1', true)).toEqual({ refused: true, retryAfterSeconds: 1 });
    expect(await granted(flood)).toEqual([true, true, false, false, false]);
    const others = [0, 1, 2].map(() => admitted(gate.enter('10.0.0.2', true)));
    expect(await granted(others)).toEqual([true, true, false]);
    expect(gate.lookUpsInFlight).toBe(4);
    const third = admitted(gate.enter('10.0.0.3', true));
    expect(await granted([third])).toEqual([false]);

    // Slots free up one at a time: 10.0.0.1 waited first, then 10.0.0.2 and 10.0.0.3 each get a turn before 10.0.0.1's next.
    flood[0].finish(false);
    expect(await granted([flood[2], others[2], third])).toEqual([true, false, false]);
    others[0].finish(false);
    expect(await granted([others[2], third, flood[3]])).toEqual([true, false, false]);
    flood[1].finish(false);
    expect(await granted([third, flood[3]])).toEqual([true, false]);
    expect(gate.lookUpsInFlight).toBe(4);
  });

  it('a look-up that stops waiting leaves the line and gets its budget back', async () => {
    const { gate } = gateAt({ inFlight: 1, missBurst: 2 });
    const first = admitted(gate.enter('10.0.0.1', true));
    const waiting = admitted(gate.enter('10.0.0.1', true));
    expect(gate.enter('10.0.0.1', true).refused).toBe(true);
    waiting.cancel();
    const next = admitted(gate.enter('10.0.0.1', true));
    first.finish(false);
    expect(await granted([waiting, next])).toEqual([false, true]);
  });

  it('forgets idle addresses beyond its limit, keeping those in flight', () => {
    const { gate } = gateAt({ maxClients: 10, inFlight: 100 });
    const held = admitted(gate.enter('10.0.0.0', true));
    for (let i = 1; i < 40; i++) admitted(gate.enter(`10.0.0.${i}`, true)).finish(false);
    expect((gate as unknown as { clients: Map<string, unknown> }).clients.size).toBeLessThanOrEqual(10);
    expect((gate as unknown as { clients: Map<string, unknown> }).clients.has('10.0.0.0')).toBe(true);
    held.finish(false);
  });
});
