import { CircuitBreaker, runWithFallback } from './fallback';
import { UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError } from './upstream.errors';

const a = { provider: 'a', model: 'm' };
const b = { provider: 'b', model: 'm' };

function scripted(outcomes: Record<string, Array<Error | string>>) {
  const calls: string[] = [];
  const attempt = async (source: { provider: string }) => {
    calls.push(source.provider);
    const next = outcomes[source.provider].shift();
    if (next instanceof Error) throw next;
    return next!;
  };
  return { calls, attempt };
}

describe('runWithFallback', () => {
  const sleeps: number[] = [];
  const options = () => ({ breaker: new CircuitBreaker(), retryAfterCapMs: 2_000, sleep: async (ms: number) => void sleeps.push(ms) });
  beforeEach(() => (sleeps.length = 0));

  it.each([
    ['a connection error', new UpstreamUnavailableError('a', 'ECONNREFUSED')],
    ['a timeout', new UpstreamTimeoutError('a', 10, true)],
    ['a 500', new UpstreamHttpError('a', 500, 'boom')],
    ['a 429 without retry-after', new UpstreamHttpError('a', 429, 'slow down')],
    ["a 401 (the operator's key)", new UpstreamHttpError('a', 401, 'invalid api key')],
    ["a 402 (the operator's credit)", new UpstreamHttpError('a', 402, 'can only afford 10 tokens')],
    ["a 403 (the operator's project)", new UpstreamHttpError('a', 403, 'no access to this model')],
  ])('falls to the next source on %s', async (_label, error) => {
    const { calls, attempt } = scripted({ a: [error], b: ['from b'] });
    await expect(runWithFallback([a, b], attempt, options())).resolves.toBe('from b');
    expect(calls).toEqual(['a', 'b']);
  });

  it('tells onFallback which source failed and why', async () => {
    const error = new UpstreamHttpError('a', 402, 'can only afford 10 tokens');
    const { attempt } = scripted({ a: [error], b: ['from b'] });
    const fallbacks: Array<[string, unknown]> = [];
    await runWithFallback([a, b], attempt, { ...options(), onFallback: (source, cause) => fallbacks.push([source.provider, cause]) });
    expect(fallbacks).toEqual([['a', error]]);
  });

  it('does not fall back on a client error, and reports it', async () => {
    const error = new UpstreamHttpError('a', 400, 'bad request');
    const { calls, attempt } = scripted({ a: [error], b: ['from b'] });
    await expect(runWithFallback([a, b], attempt, options())).rejects.toBe(error);
    expect(calls).toEqual(['a']);
  });

  it('waits for a short retry-after and tries the same source again', async () => {
    const { calls, attempt } = scripted({ a: [new UpstreamHttpError('a', 429, 'slow', 1), 'from a'], b: [] });
    await expect(runWithFallback([a, b], attempt, options())).resolves.toBe('from a');
    expect(calls).toEqual(['a', 'a']);
    expect(sleeps).toEqual([1000]);
  });

  it('moves on instead of waiting for a retry-after above the cap', async () => {
    const { calls, attempt } = scripted({ a: [new UpstreamHttpError('a', 429, 'slow', 60)], b: ['from b'] });
    await expect(runWithFallback([a, b], attempt, options())).resolves.toBe('from b');
    expect(calls).toEqual(['a', 'b']);
    expect(sleeps).toEqual([]);
  });

  it('throws the last error when every source fails', async () => {
    const last = new UpstreamHttpError('b', 503, 'down');
    const { attempt } = scripted({ a: [new UpstreamHttpError('a', 502, 'x')], b: [last] });
    await expect(runWithFallback([a, b], attempt, options())).rejects.toBe(last);
  });
});

describe('CircuitBreaker', () => {
  it('skips a source after repeated failures and lets it try again after the cooldown', async () => {
    let now = 0;
    const breaker = new CircuitBreaker(3, 1_000, () => now);
    for (let i = 0; i < 3; i++) breaker.failure('a:m');
    expect(breaker.canTry('a:m')).toBe(false);
    const { calls, attempt } = scripted({ a: ['from a'], b: ['from b', 'from b'] });
    await expect(runWithFallback([a, b], attempt, { breaker, retryAfterCapMs: 0 })).resolves.toBe('from b');
    expect(calls).toEqual(['b']);
    now = 1_001;
    expect(breaker.canTry('a:m')).toBe(true); // half-open: one attempt
    expect(breaker.canTry('a:m')).toBe(false);
    breaker.success('a:m');
    expect(breaker.canTry('a:m')).toBe(true);
  });

  it('still tries when every source is open rather than failing without trying', async () => {
    const breaker = new CircuitBreaker(1, 60_000);
    breaker.failure('a:m');
    const { calls, attempt } = scripted({ a: ['from a'] });
    await expect(runWithFallback([a], attempt, { breaker, retryAfterCapMs: 0 })).resolves.toBe('from a');
    expect(calls).toEqual(['a']);
  });
});
