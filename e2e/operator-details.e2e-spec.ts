import { request } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ScratchDatabase } from '@igw/persistence';
import { eventually, createTestDatabase } from '@igw/testing';
import { call, expectErrorBody } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** A TCP relay to PostgreSQL that can be cut (its port closed: connections are refused) and mended. */
async function startRelay(target: URL): Promise<{ port: number; cut(): Promise<void>; mend(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return { port, cut: stop, mend: () => listen(port), close: stop };
}

/** A GET whose path is sent as written (fetch would resolve `..` before sending). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const sent = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/**
 * What only the operator should read: why a dependency is down (a driver's message, an internal
 * address) goes to the log, never into /readyz's answer; and /metrics and /readyz cannot be
 * reached through a path the Ingress and HAProxy route (they route /v1/... and /docs only).
 */
describe("the operator's details", () => {
  let database: ScratchDatabase;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    relay = await startRelay(new URL(database.url));
    url.host = `127.0.0.1:${relay.port}`;
    harness = await startStandaloneHarness({ DATABASE_URL: url.toString() });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await relay?.close();
    await database?.drop();
  });

  it.each(['/v1/../metrics', '/v1/%2e%2e/metrics', '/v1/..%2fmetrics', '/v1/../readyz', '/docs/../metrics'])(
    'serves no metrics or readiness through %s, a path the proxies route',
    async (path) => {
      const answer = await rawGet(harness.gateway, path);
      expect(answer.status).toBe(404);
      expect(answer.body).not.toMatch(/igw_|"checks"/);
    },
  );

  it('answers /readyz with the names of the failed checks only, logs why, and is ready again once the database is back', async () => {
    await relay.cut();
    try {
      let ready: Awaited<ReturnType<typeof call>> | undefined;
      await eventually(async () => (ready = await call(`${harness.billing}/readyz`)).status === 503, 15_000, 200);
      expectErrorBody(ready!, 503, '/readyz', /^Not ready: [a-z]+(, [a-z]+)*$/);
      expect((ready!.body as { message: string }).message).toContain('database');
      expect(JSON.stringify(ready!.body)).not.toContain(String(relay.port));
      await eventually(async () => new RegExp(`WARN.*not ready: .*database \\(.*${relay.port}`).test(harness.process.output()), 5_000);
    } finally {
      await relay.mend();
    }
    // The queue too (on PostgreSQL in the run without REDIS_URL): BullMQ's PostgreSQL backend kept
    // the failed connection of a queue made during the outage, and /readyz stayed 503 for good.
    await eventually(async () => (await call(`${harness.billing}/readyz`)).status === 200, 30_000, 200);
  });
});
