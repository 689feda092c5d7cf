import type { UsageEvent } from '../billing/usage-event';
import { usageBatchEvents } from './queues';

const event = (requestId: string): UsageEvent => ({
  requestId,
  accountId: 'a',
  keyId: 'k',
  model: 'm',
  endpoint: 'chat.completions',
  units: { input_tokens: 3, output_tokens: 1 },
  creditsMicro: '42',
  usd: '0.000021',
  catalogueRevision: 7,
  prices: [{ unit: 'input_tokens', price: 0.15, per: 1_000_000 }],
  occurredAt: '2026-11-21T00:00:00.000Z',
});

describe('usageBatchEvents', () => {
  it('reads a batch sent as JSON lines and one sent as objects alike', () => {
    const events = [event('r1'), event('r2 with "quotes" and \\n escapes')];
    expect(usageBatchEvents({ eventLines: events.map((one) => JSON.stringify(one)).join('\n') })).toEqual(events);
    expect(usageBatchEvents({ events })).toEqual(events);
  });

  it('reads an empty batch in either form', () => {
    expect(usageBatchEvents({ eventLines: '' })).toEqual([]);
    expect(usageBatchEvents({ events: [] })).toEqual([]);
  });
});
