import type { CatalogueModel } from '@igw/contracts';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import { planTargets, upstreamLimitsOf, upstreamTimeoutMsOf } from './upstream-route';

const settingsFrom = (variables: NodeJS.ProcessEnv): ServiceSettings => {
  const { env, providers } = loadEnvironment(variables);
  return { env, providers, queue: { kind: 'redis', url: 'redis://unused', prefix: 'igw' } };
};

const model = (routing: Partial<CatalogueModel['routing']> = {}): CatalogueModel => ({
  id: 'a/b',
  aliases: [],
  type: 'openai/chat-completions',
  info: { name: 'B', developer: 'A', description: '' },
  tags: [],
  routing: { sources: [{ provider: 'openai', model: 'b' }], ...routing },
});

describe('upstreamLimitsOf', () => {
  it('takes the environment defaults: 32 MiB answers, 64 KiB error bodies, 8 MiB events, 30 min streams', () => {
    expect(upstreamLimitsOf(model(), settingsFrom({}))).toEqual({
      maxResponseBytes: 32 * 1024 * 1024,
      maxErrorBytes: 64 * 1024,
      maxEventBytes: 8 * 1024 * 1024,
      maxStreamMs: 30 * 60 * 1000,
    });
  });

  it("takes the environment's values, and a model's own stream duration over UPSTREAM_STREAM_MAX_MS", () => {
    const settings = settingsFrom({
      UPSTREAM_MAX_RESPONSE_BYTES: '1048576',
      UPSTREAM_MAX_ERROR_BYTES: '2048',
      UPSTREAM_MAX_EVENT_BYTES: '4096',
      UPSTREAM_STREAM_MAX_MS: '60000',
    });
    expect(upstreamLimitsOf(model(), settings)).toEqual({ maxResponseBytes: 1048576, maxErrorBytes: 2048, maxEventBytes: 4096, maxStreamMs: 60_000 });
    expect(upstreamLimitsOf(model({ maxStreamSeconds: 2 }), settings)).toEqual({ maxResponseBytes: 1048576, maxErrorBytes: 2048, maxEventBytes: 4096, maxStreamMs: 2_000 });
  });

  it('refuses limits too small to read any answer', () => {
    expect(() => loadEnvironment({ UPSTREAM_MAX_RESPONSE_BYTES: '10' })).toThrow(/UPSTREAM_MAX_RESPONSE_BYTES must not be less than 1024/);
    expect(() => loadEnvironment({ UPSTREAM_STREAM_MAX_MS: 'soon' })).toThrow(/UPSTREAM_STREAM_MAX_MS/);
  });

  it('hands the limits to every target of the route', () => {
    const settings = settingsFrom({ OPENAI_API_KEY: 'k' });
    const entry = model({ maxStreamSeconds: 5 });
    const [target] = planTargets(entry, entry.routing.sources, settings);
    expect(target.limits?.maxStreamMs).toBe(5_000);
  });
});

describe('upstreamTimeoutMsOf', () => {
  it("takes UPSTREAM_TIMEOUT_MS, or the model's own routing.timeoutSeconds", () => {
    const settings = settingsFrom({ UPSTREAM_TIMEOUT_MS: '30000' });
    expect(upstreamTimeoutMsOf(model(), settings)).toBe(30_000);
    expect(upstreamTimeoutMsOf(model({ timeoutSeconds: 900 }), settings)).toBe(900_000);
  });
});
