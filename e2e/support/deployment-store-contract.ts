import { COOLDOWN_RULES, MINUTE_MS, type Candidate, type DeploymentStore, type Reservation } from '@igw/providers';

/**
 * What every DeploymentStore must do, as Jest cases: the process's store is run through them
 * in its unit spec, the Redis one in an integration spec against a real server.
 */
export function deploymentStoreContract(name: string, open: () => DeploymentStore | Promise<DeploymentStore>): void {
  describe(`${name}: the deployment store's rules`, () => {
    let store: DeploymentStore;
    let unique = 0;
    // A minute's start, so a test's few seconds never cross into the next one.
    const t0 = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS + MINUTE_MS * 100;
    const deployment = () => `test-${process.pid}-${Date.now()}-${++unique}`;
    const candidate = (name: string, quotas: Candidate['quotas'] = {}, tokens = 10): Candidate => ({ deployment: name, quotas, tokens });
    const reservation = (name: string, leaseId: string, tokens = 10, at = t0): Reservation => ({ deployment: name, leaseId, minute: Math.floor(at / MINUTE_MS), tokens });

    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });

    it('takes the first candidate that fits, counting it in flight and in the minute', async () => {
      const a = deployment();
      const b = deployment();
      const pick = await store.reserve([candidate(a), candidate(b)], 'l1', 60_000, t0);
      expect(pick.chosen).toBe(0);
      const [state] = await store.snapshot([a], t0);
      expect(state).toMatchObject({ inFlight: 1, requestsThisMinute: 1, tokensThisMinute: 10 });
      store.record(reservation(a, 'l1'), { kind: 'answered', latencyMs: 120 }, true, 4, t0 + 1);
      await settle(store, a, t0 + 2, (s) => s.inFlight === 0);
      expect((await store.snapshot([a], t0 + 2))[0]).toMatchObject({ inFlight: 0, requestsThisMinute: 1, tokensThisMinute: 4, latencyMs: 120 });
    });

    it('reads every candidate for the strategies that order by them, and stops at the one reserved otherwise', async () => {
      const a = deployment();
      const b = deployment();
      await store.reserve([candidate(b)], 'v0', 60_000, t0);
      store.record(reservation(b, 'v0'), { kind: 'answered', latencyMs: 80 }, false, undefined, t0);
      await settle(store, b, t0, (s) => s.latencyMs === 80);
      const seen = await store.reserve([candidate(a), candidate(b)], 'v1', 60_000, t0, true);
      expect(seen).toMatchObject({ chosen: 0, views: [{ inFlight: 0 }, { inFlight: 1, latencyMs: 80 }] });
      expect((await store.reserve([candidate(a), candidate(b)], 'v2', 60_000, t0)).views).toEqual([]);
    });

    it('skips a deployment past its rpm, tpm or concurrency, and says when the first frees up', async () => {
      const a = deployment();
      const b = deployment();
      expect((await store.reserve([candidate(a, { rpm: 1 })], 'r1', 60_000, t0)).chosen).toBe(0);
      expect((await store.reserve([candidate(a, { rpm: 1 }), candidate(b)], 'r2', 60_000, t0)).chosen).toBe(1);
      const refused = await store.reserve([candidate(a, { rpm: 1 })], 'r3', 60_000, t0 + 1_000);
      expect(refused.chosen).toBe(-1);
      expect(refused.retryAfterMs).toBe(MINUTE_MS - 1_000);
      // A new minute starts the counts again.
      expect((await store.reserve([candidate(a, { rpm: 1 })], 'r4', 60_000, t0 + MINUTE_MS)).chosen).toBe(0);

      const c = deployment();
      expect((await store.reserve([candidate(c, { tpm: 100 }, 60)], 't1', 60_000, t0)).chosen).toBe(0);
      expect((await store.reserve([candidate(c, { tpm: 100 }, 60)], 't2', 60_000, t0)).chosen).toBe(-1);
      // Settled on what the answer used, the tokens left fit the next request.
      store.record(reservation(c, 't1', 60), { kind: 'answered', latencyMs: 1 }, true, 20, t0);
      await settle(store, c, t0, (s) => s.tokensThisMinute === 20);
      expect((await store.reserve([candidate(c, { tpm: 100 }, 60)], 't3', 60_000, t0)).chosen).toBe(0);

      const d = deployment();
      expect((await store.reserve([candidate(d, { maxConcurrent: 1 })], 'c1', 60_000, t0)).chosen).toBe(0);
      expect((await store.reserve([candidate(d, { maxConcurrent: 1 })], 'c2', 60_000, t0)).chosen).toBe(-1);
      // A lease never given back lapses.
      expect((await store.reserve([candidate(d, { maxConcurrent: 1 })], 'c3', 60_000, t0 + 60_001)).chosen).toBe(0);
    });

    it('refuses a deployment cooling after a 429 until its cooldown ends, and names when', async () => {
      const a = deployment();
      await store.reserve([candidate(a)], 'x1', 60_000, t0);
      store.record(reservation(a, 'x1'), { kind: 'rate-limited', cooldownMs: 5_000 }, true, undefined, t0);
      await settle(store, a, t0, (s) => s.coolingReason === 'rate-limited');
      const during = await store.reserve([candidate(a)], 'x2', 60_000, t0 + 4_000);
      expect(during).toMatchObject({ chosen: -1, retryAfterMs: 1_000 });
      expect((await store.reserve([candidate(a)], 'x3', 60_000, t0 + 5_001)).chosen).toBe(0);
    });

    it('sends traffic past a deployment cooled for failures, yet tries it when nothing else is left', async () => {
      const a = deployment();
      const b = deployment();
      await store.reserve([candidate(a)], 'f1', 60_000, t0);
      store.record(reservation(a, 'f1'), { kind: 'failed' }, true, undefined, t0);
      await settle(store, a, t0, (s) => s.coolingReason === 'failing');
      expect((await store.reserve([candidate(a), candidate(b)], 'f2', 60_000, t0 + 10)).chosen).toBe(1);
      expect((await store.reserve([candidate(a)], 'f3', 60_000, t0 + 10)).chosen).toBe(0);
      expect((await store.reserve([candidate(a), candidate(b)], 'f4', 60_000, t0 + COOLDOWN_RULES.failureBriefMs + 1)).chosen).toBe(0);
    });

    it('cools a deployment long once failures are frequent, and a refused key for a minute', async () => {
      const a = deployment();
      for (let index = 0; index < COOLDOWN_RULES.failureMinCount; index++) {
        await store.reserve([candidate(a)], `m${index}`, 60_000, t0);
        store.record(reservation(a, `m${index}`), { kind: 'failed' }, true, undefined, t0);
      }
      await settle(store, a, t0, (s) => s.failuresThisMinute === COOLDOWN_RULES.failureMinCount);
      expect((await store.snapshot([a], t0))[0]).toMatchObject({ coolingUntil: t0 + COOLDOWN_RULES.failureLongMs, coolingReason: 'failing', attemptsThisMinute: 5 });

      const b = deployment();
      await store.reserve([candidate(b)], 'k1', 60_000, t0);
      store.record(reservation(b, 'k1'), { kind: 'refused' }, true, undefined, t0);
      await settle(store, b, t0, (s) => s.coolingReason === 'refused');
      expect((await store.snapshot([b], t0))[0].coolingUntil).toBe(t0 + COOLDOWN_RULES.refusedMs);
    });

    it("believes the upstream's own rate-limit headers", async () => {
      const a = deployment();
      store.observe(a, { requestsLeft: 0, requestsResetMs: 2_000 }, t0);
      await settle(store, a, t0, (s) => s.upstreamExhaustedUntil > 0);
      expect(await store.reserve([candidate(a)], 'h1', 60_000, t0 + 1_000)).toMatchObject({ chosen: -1, retryAfterMs: 1_000 });
      expect((await store.reserve([candidate(a)], 'h2', 60_000, t0 + 2_001)).chosen).toBe(0);
      const b = deployment();
      store.observe(b, { tokensLeft: 50, tokensResetMs: 3_000 }, t0);
      await settle(store, b, t0, () => true);
      expect((await store.reserve([candidate(b, {}, 80)], 'h3', 60_000, t0)).chosen).toBe(-1);
      expect((await store.reserve([candidate(b, {}, 40)], 'h4', 60_000, t0)).chosen).toBe(0);
    });
  });
}

/** Records are sent without waiting (off the request path): a test waits until the store shows one. */
async function settle(store: DeploymentStore, deployment: string, now: number, done: (state: Awaited<ReturnType<DeploymentStore['snapshot']>>[number]) => boolean): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    const [state] = await store.snapshot([deployment], now);
    if (done(state)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
