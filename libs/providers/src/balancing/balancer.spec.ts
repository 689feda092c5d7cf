import type { RouteTarget } from '../routing';
import { UpstreamHttpError, UpstreamUnavailableError } from '../upstream.errors';
import { DeploymentBalancer, DeploymentsBusyError, outcomeOf } from './balancer';
import { InMemoryDeploymentStore } from './deployment-store';
import { TierOrder } from './strategies';

const target = (deployment: string, rest: Partial<RouteTarget> = {}): RouteTarget =>
  ({ provider: deployment.split('/')[0], model: 'm', baseUrl: 'http://127.0.0.1:1', deployment, weight: 1, tier: 0, quotas: {}, definition: { name: 'x', kind: 'openai' }, ...rest }) as RouteTarget;
const call = { group: 'g', endpoint: 'chat.completions', strategy: 'weighted' as const, tokens: 10, leaseMs: 60_000 };

describe('TierOrder', () => {
  it('shares a tier exactly by weight with a smooth round robin', () => {
    const order = new TierOrder('weighted');
    const members = [
      { deployment: 'a', weight: 3 },
      { deployment: 'b', weight: 2 },
      { deployment: 'c', weight: 1 },
    ];
    const firsts = Array.from({ length: 600 }, () => order.order(members, new Map())[0].deployment);
    expect(firsts.filter((name) => name === 'a')).toHaveLength(300);
    expect(firsts.filter((name) => name === 'b')).toHaveLength(200);
    expect(firsts.filter((name) => name === 'c')).toHaveLength(100);
    // Smooth: the heaviest never takes six turns in a row.
    expect(firsts.slice(0, 6)).toEqual(['a', 'b', 'a', 'c', 'b', 'a']);
  });

  it('sends least-busy to the fewest in flight, lowest-latency to the fastest, ordered as listed', () => {
    const members = [
      { deployment: 'a', weight: 1 },
      { deployment: 'b', weight: 1 },
    ];
    const views = new Map([
      ['a', { inFlight: 5, latencyMs: 40 }],
      ['b', { inFlight: 1, latencyMs: 400 }],
    ]);
    expect(new TierOrder('least-busy').order(members, views)[0].deployment).toBe('b');
    expect(new TierOrder('lowest-latency', () => 0.5).order(members, views)[0].deployment).toBe('a');
    // One never measured is tried first: it is how it gets measured.
    expect(new TierOrder('lowest-latency', () => 0.5).order(members, new Map([['a', { inFlight: 0, latencyMs: 40 }]]))[0].deployment).toBe('b');
    expect(new TierOrder('ordered').order([...members].reverse(), views).map((member) => member.deployment)).toEqual(['b', 'a']);
  });
});

describe('DeploymentBalancer', () => {
  it('retries another deployment of the tier, then the next tier, never one already tried', async () => {
    const balancer = new DeploymentBalancer(new InMemoryDeploymentStore());
    const tried: string[] = [];
    const result = await balancer.run(
      [target('a/m'), target('b/m'), target('c/m', { tier: 1 })],
      async (to) => {
        tried.push(to.deployment);
        if (to.deployment !== 'c/m') throw new UpstreamHttpError(to.provider, 503, 'down');
        return 'ok';
      },
      call,
    );
    expect(result).toBe('ok');
    expect(tried.sort()).toEqual(['a/m', 'b/m', 'c/m']);
  });

  it('does not retry the request\'s own fault, nor once the caller says no other may be tried', async () => {
    const balancer = new DeploymentBalancer(new InMemoryDeploymentStore());
    let attempts = 0;
    const bad = new UpstreamHttpError('a', 400, 'bad request');
    await expect(balancer.run([target('a/m'), target('b/m')], async () => (attempts++, Promise.reject(bad)), call)).rejects.toBe(bad);
    expect(attempts).toBe(1);
  });

  it('keeps a deployment that answered 429 out until its retry-after, and tells the client when nothing is left', async () => {
    const store = new InMemoryDeploymentStore();
    const balancer = new DeploymentBalancer(store);
    const limited = new UpstreamHttpError('a', 429, 'slow down', 5);
    await expect(balancer.run([target('a/m')], async () => Promise.reject(limited), call)).rejects.toBe(limited);
    const refused = balancer.run([target('a/m')], async () => 'never', call);
    await expect(refused).rejects.toBeInstanceOf(DeploymentsBusyError);
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: 5 });
    // Its sibling takes the traffic meanwhile.
    await expect(balancer.run([target('a/m'), target('b/m')], async (to) => to.deployment, call)).resolves.toBe('b/m');
  });

  it('still tries a lone deployment cooled for failures: only real traffic shows it is back', async () => {
    const balancer = new DeploymentBalancer(new InMemoryDeploymentStore());
    await expect(balancer.run([target('a/m')], async () => Promise.reject(new UpstreamUnavailableError('a', 'ECONNRESET')), call)).rejects.toBeInstanceOf(UpstreamUnavailableError);
    await expect(balancer.run([target('a/m')], async () => 'back', call)).resolves.toBe('back');
  });

  it("believes what the upstream's rate-limit headers say is left", async () => {
    const store = new InMemoryDeploymentStore();
    const balancer = new DeploymentBalancer(store);
    await balancer.run([target('a/m')], async (to) => (to.onRateLimits?.({ requestsLeft: 0, requestsResetMs: 30_000 }), 'ok'), call);
    await expect(balancer.run([target('a/m')], async () => 'never', call)).rejects.toMatchObject({ retryAfterSeconds: 30 });
  });

  it('learns a cooldown from 429 and 5xx, a long one from refusals, nothing from the request\'s own fault', () => {
    expect(outcomeOf(new UpstreamHttpError('a', 429, '', 500))).toEqual({ kind: 'rate-limited', cooldownMs: 60_000 });
    expect(outcomeOf(new UpstreamHttpError('a', 429, ''))).toEqual({ kind: 'rate-limited', cooldownMs: 2_000 });
    expect(outcomeOf(new UpstreamHttpError('a', 502, ''))).toEqual({ kind: 'failed' });
    expect(outcomeOf(new UpstreamHttpError('a', 401, ''))).toEqual({ kind: 'refused' });
    expect(outcomeOf(new UpstreamHttpError('a', 400, ''))).toEqual({ kind: 'neutral' });
  });
});
