import type { UsageEvent } from '@igw/contracts';
import { usageBatchEvents, usageBatchOf } from './queues';

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

describe('usage batches', () => {
  it('carry events as deflated JSON lines, in order and exactly', async () => {
    const events = [event('r1'), event('r2 with "quotes", a \\n escape and ünïcödé ✓'), ...Array.from({ length: 500 }, (_, index) => event(`r${index + 3}`))];
    const batch = await usageBatchOf(Buffer.from(events.map((one) => JSON.stringify(one)).join('\n')));
    expect(Object.keys(batch)).toEqual(['eventLinesDeflated']);
    expect(usageBatchEvents(batch)).toEqual(events);
  });

  it('are much smaller than the JSON lines they carry', async () => {
    const lines = Array.from({ length: 500 }, (_, index) => JSON.stringify(event(`req_${index}`)));
    const batch = await usageBatchOf(Buffer.from(lines.join('\n')));
    expect(batch.eventLinesDeflated.length).toBeLessThan(lines.join('\n').length / 5);
  });

  it('may be empty', async () => {
    expect(usageBatchEvents(await usageBatchOf(new Uint8Array(0)))).toEqual([]);
  });

  it('refuse a deflated batch that is not one (billing retries the job and keeps it as failed)', () => {
    expect(() => usageBatchEvents({ eventLinesDeflated: Buffer.from('not deflate data at all').toString('base64') })).toThrow();
  });
});
