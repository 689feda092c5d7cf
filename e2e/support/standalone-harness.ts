import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { call } from './http';
import { childEnvironment, startService, type ServiceProcess } from './service-process';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from './test-environment';

export interface StandaloneHarness {
  gateway: string;
  billing: string;
  adminToken: string;
  process: ServiceProcess;
  /** A paid account with `credits` and a key for it. */
  paidKey(credits: number): Promise<{ accountId: string; keyId: string; key: string }>;
  balance(key: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The standalone app as `npm start` runs it, on free ports and its own data folder (or the
 * run's DATABASE_URL/REDIS_URL), with `env` added (upstream addresses, catalogue file, ...).
 */
export async function startStandaloneHarness(env: NodeJS.ProcessEnv): Promise<StandaloneHarness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-'));
  const ports = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
  let database: ScratchDatabase | undefined;
  const external: NodeJS.ProcessEnv = {};
  if (process.env.DATABASE_URL) {
    database = await createTestDatabase();
    external.DATABASE_URL = database.url;
  }
  if (process.env.REDIS_URL) Object.assign(external, { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() });
  const childEnv = childEnvironment({
    ...external,
    DATA_DIR: dataDir,
    PORT: String(ports[0]),
    BILLING_PORT: String(ports[1]),
    CATALOGUE_PORT: String(ports[2]),
    DECISIONS_PORT: String(ports[3]),
    ...env,
  });
  const standalone = startService('apps/standalone/src/main.js', childEnv);
  await standalone.waitForOutput(/Press Ctrl-C to stop/, 90_000);
  const gateway = `http://127.0.0.1:${ports[0]}`;
  const billing = `http://127.0.0.1:${ports[1]}`;
  const adminToken = (await readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim();

  return {
    gateway,
    billing,
    adminToken,
    process: standalone,
    async paidKey(credits) {
      const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: adminToken, body: { credits, plan: 'paid' } });
      const key = await call<{ id: string; key: string }>(`${billing}/admin/v1/accounts/${account.body.id}/keys`, { token: adminToken, body: {} });
      return { accountId: account.body.id, keyId: key.body.id, key: key.body.key };
    },
    async balance(key) {
      return (await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key })).body.balance;
    },
    async stop() {
      await standalone.stop();
      await dropQueueData({ url: childEnv.REDIS_URL, prefix: childEnv.QUEUE_PREFIX });
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
