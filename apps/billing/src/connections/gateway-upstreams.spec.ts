import { Logger } from '@nestjs/common';
import type { GatewayUpstreams, MessagingService } from '@igw/messaging';
import { FakeRelay } from './fake-relay.testing';
import { GatewayUpstreamsAsk } from './gateway-upstreams';

const upstreams = (providers: string[]): GatewayUpstreams => ({ revision: 3, providers, answerable: [], connections: { providersFile: null, connections: [] } });

async function askOn(relay: FakeRelay): Promise<GatewayUpstreamsAsk> {
  const ask = new GatewayUpstreamsAsk(relay as unknown as MessagingService);
  await ask.onApplicationBootstrap();
  return ask;
}

describe('GatewayUpstreamsAsk', () => {
  let warnings: string[];
  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  });
  afterEach(() => jest.restoreAllMocks());

  it("answers with the first gateway's answer, whatever the slower ones say", async () => {
    const relay = new FakeRelay();
    relay.gateway(upstreams(['slow']), 80);
    relay.gateway(upstreams(['fast']), 5);
    const ask = await askOn(relay);
    expect(await ask.ask()).toEqual(upstreams(['fast']));
    expect(relay.published.filter(({ topic }) => topic === 'gateway.upstreams.asked')).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('gives each of several asks at once the answer to its own question', async () => {
    const relay = new FakeRelay();
    let asked = 0;
    // A gateway whose answers differ per ask and arrive in the reverse order of the asks.
    void relay.subscribe('gateway.upstreams.asked', ({ askId }) => {
      const nth = ++asked;
      setTimeout(() => void relay.publish('gateway.upstreams.answered', { askId, ...upstreams([`ask-${nth}`]) }), 60 - nth * 10);
    });
    const ask = await askOn(relay);
    const answers = await Promise.all([ask.ask(), ask.ask(), ask.ask()]);
    expect(answers.map((answer) => answer?.providers)).toEqual([['ask-1'], ['ask-2'], ['ask-3']]);
  });

  it('answers null after the time with no gateway, and drops an answer that comes later', async () => {
    const relay = new FakeRelay();
    relay.gateway(upstreams(['late']), 150);
    const ask = await askOn(relay);
    const started = Date.now();
    expect(await ask.ask(50)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(warnings).toEqual(['no gateway answered within 50 ms what it routes to']);
    // The late answer finds no ask waiting: nothing resolves twice, nothing throws.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(relay.published.filter(({ topic }) => topic === 'gateway.upstreams.answered')).toHaveLength(1);
  });

  it('answers null at once when the question cannot be sent, saying why', async () => {
    const relay = new FakeRelay();
    relay.failPublish = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    const ask = await askOn(relay);
    const started = Date.now();
    expect(await ask.ask()).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(warnings).toEqual(['could not ask the gateways what they route to: connect ECONNREFUSED 127.0.0.1:6379']);
  });
});
