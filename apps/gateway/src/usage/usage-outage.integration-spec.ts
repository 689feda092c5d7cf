import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueueName, usageBatchEvents, createBullBackend, MessagingService, type QueueBackendOptions } from '@igw/messaging';
import type { UsageEvent } from '@igw/contracts';
import type { ScratchDatabase } from '@igw/persistence';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import { eventually, startTcpProxy, type TcpProxy, createTestDatabase, dropQueueData, testQueueBackend } from '@igw/testing';
import { UsageRecorder } from './usage-recorder.service';

const MAX_BUFFERED = 50;
const DURING_OUTAGE = 600;

const event = (n: number): UsageEvent => ({
  requestId: `req-outage-${n}`,
  accountId: '00000000-0000-4000-8000-000000000001',
  keyId: '00000000-0000-4000-8000-000000000002',
  model: 'test/mini',
  endpoint: 'chat.completions',
  units: { input_tokens: 1000 },
  creditsMicro: '300000000',
  usd: '0.00015',
  catalogueRevision: 1,
  prices: [{ unit: 'input_tokens', price: 0.15, per: 1_000_000 }],
  occurredAt: new Date().toISOString(),
});

/**
 * A long queue outage does not grow the gateway's memory: beyond USAGE_MAX_BUFFERED_EVENTS
 * its usage events wait in the journal only, and are read back from it once the queue takes
 * events again; every event arrives. Delivered batches do not stay in the queue.
 */
describe('usage events during a queue outage', () => {
  let database: ScratchDatabase;
  let direct: QueueBackendOptions;
  let proxy: TcpProxy;
  let journalDir: string;
  let recorder: UsageRecorder;
  let gatewaySide: MessagingService;
  let billingSide: MessagingService;
  const received = new Map<string, number>();

  beforeAll(async () => {
    database = await createTestDatabase();
    direct = testQueueBackend(database.url);
    const url = new URL(direct.url);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) || (direct.kind === 'redis' ? 6379 : 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    const proxied: QueueBackendOptions = { ...direct, url: url.toString() };
    journalDir = path.join(mkdtempSync(path.join(tmpdir(), 'igw-outage-')), 'usage-journal');
    const { env } = loadEnvironment({ USAGE_JOURNAL_DIR: journalDir, USAGE_MAX_BUFFERED_EVENTS: String(MAX_BUFFERED), LOG_LEVEL: 'error' });
    gatewaySide = new MessagingService({ serviceName: 'gateway-side', backend: proxied });
    billingSide = new MessagingService({ serviceName: 'billing-side', backend: direct });
    recorder = new UsageRecorder(gatewaySide, { env, providers: {}, queue: proxied } as ServiceSettings);
    recorder.onModuleInit();
  });

  afterAll(async () => {
    proxy?.restore();
    await recorder?.beforeApplicationShutdown();
    await gatewaySide?.onApplicationShutdown();
    await billingSide?.onApplicationShutdown();
    await proxy?.close();
    await dropQueueData(direct);
    await database?.drop();
    if (journalDir) rmSync(path.dirname(journalDir), { recursive: true, force: true });
  });

  it('keeps at most the configured events in memory, the rest in the journal, and delivers every one once the queue is back', async () => {
    proxy.cut();
    for (let n = 0; n < DURING_OUTAGE; n++) {
      recorder.record(event(n));
      expect(recorder.pendingEvents()).toBeLessThanOrEqual(MAX_BUFFERED);
    }
    const journaled = readdirSync(journalDir)
      .filter((name) => name.endsWith('.jsonl'))
      .flatMap((name) => readFileSync(path.join(journalDir, name), 'utf8').split('\n').filter(Boolean));
    expect(journaled).toHaveLength(DURING_OUTAGE);

    billingSide.consume(QueueName.Usage, {
      'usage.recordBatch': async (batch) => {
        const events = usageBatchEvents(batch);
        for (const one of events) received.set(one.requestId, (received.get(one.requestId) ?? 0) + 1);
        return { applied: events.length };
      },
    });
    proxy.restore();
    await eventually(async () => received.size === DURING_OUTAGE, 45_000, 100);
    expect([...received.keys()].sort()).toEqual(Array.from({ length: DURING_OUTAGE }, (_, n) => event(n).requestId).sort());
    // Confirmed, so the journal lets its files go.
    await eventually(async () => !existsSync(journalDir) || readdirSync(journalDir).every((name) => !name.endsWith('.jsonl')), 10_000, 100);

    // Applied batches leave the queue at once (none kept for an hour with their events).
    const queue = createBullBackend(direct).createQueue(QueueName.Usage);
    try {
      await eventually(async () => (await queue.getJobCounts('active', 'waiting', 'delayed')).active === 0, 10_000, 100);
      expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 0, failed: 0 });
    } finally {
      await queue.close();
    }
  }, 60_000);
});
