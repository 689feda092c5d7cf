import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { call } from './http';
import { childEnvironment, startService, type ServiceProcess } from './service-process';

/** A usage row of the billing admin API (`GET /admin/v1/accounts/{id}/usage`). */
export interface UsageEntry {
  requestId: string | null;
  model: string | null;
  endpoint: string | null;
  /** The deployment that served the request, `<connection>/<upstream>`; null when the event named none. */
  deployment: string | null;
  units: Record<string, number> | null;
  /** What the entry charged (usage) or added (credit), an exact decimal string. */
  credits: string;
  usd: string;
  prices: Array<{ unit: string; price: number; per: number; promptTokensAbove?: number }> | null;
}

export interface StandaloneHarness {
  gateway: string;
  billing: string;
  /** The catalogue's admin API: on billing's port in standalone. */
  catalogue: string;
  adminToken: string;
  process: ServiceProcess;
  /** A paid account with `credits` and a key for it. */
  paidKey(credits: number): Promise<{ accountId: string; keyId: string; key: string }>;
  balance(key: string): Promise<number>;
  /** The account's newest `limit` usage rows in the ledger. */
  usageEntries(accountId: string, limit: number): Promise<UsageEntry[]>;
  stop(): Promise<void>;
}

/**
 * The standalone app as `npm start` runs it, on free ports and its own data folder (or the
 * run's DATABASE_URL/REDIS_URL), with `env` added (upstream addresses, catalogue file, ...).
 */
export async function startStandaloneHarness(env: NodeJS.ProcessEnv): Promise<StandaloneHarness> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-'));
  const ports = await Promise.all([findFreePort(), findFreePort()]);
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
    ...env,
  });
  const standalone = startService('apps/standalone/src/main.js', childEnv);
  // The banner's last line, or with LOG_FORMAT=json its one JSON line.
  await standalone.waitForOutput(/Press Ctrl-C to stop|"msg":"Inference gateway is running \(standalone\)"/, 90_000);
  const gateway = `http://127.0.0.1:${ports[0]}`;
  const billing = `http://127.0.0.1:${ports[1]}`;
  const adminToken = (await readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim();

  return {
    gateway,
    billing,
    catalogue: billing,
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
    async usageEntries(accountId, limit) {
      return (await call<{ data: UsageEntry[] }>(`${billing}/admin/v1/accounts/${accountId}/usage?kind=usage&limit=${limit}`, { token: adminToken })).body.data;
    },
    async stop() {
      await standalone.stop();
      await dropQueueData({ url: childEnv.REDIS_URL, prefix: childEnv.QUEUE_PREFIX });
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Credentials and base URLs that point every provider the emulator plays (OpenAI and two
 * OpenAI-compatible servers, Azure OpenAI, Anthropic, Gemini, Deepgram, Stability) at the emulator.
 */
export function emulatedProviders(emulatorUrl: string): NodeJS.ProcessEnv {
  return {
    OPENAI_API_KEY: 'openai-key',
    OPENAI_BASE_URL: `${emulatorUrl}/v1`,
    GROQ_API_KEY: 'groq-key',
    GROQ_BASE_URL: `${emulatorUrl}/v1`,
    TOGETHER_API_KEY: 'together-key',
    TOGETHER_BASE_URL: `${emulatorUrl}/v1`,
    AZURE_OPENAI_API_KEY: 'azure-key',
    AZURE_OPENAI_ENDPOINT: emulatorUrl,
    ANTHROPIC_API_KEY: 'anthropic-key',
    ANTHROPIC_BASE_URL: emulatorUrl,
    GEMINI_API_KEY: 'gemini-key',
    GEMINI_BASE_URL: `${emulatorUrl}/v1beta`,
    DEEPGRAM_API_KEY: 'deepgram-key',
    DEEPGRAM_BASE_URL: emulatorUrl,
    STABILITY_API_KEY: 'stability-key',
    STABILITY_BASE_URL: emulatorUrl,
  };
}
