import { drainAndClose } from '@igw/http';
import { loadEnvironment, requireDistributedSetting, resolveQueueBackend, runUntilSignal, waitForDependencies } from '@igw/config';
import { startBilling } from './billing.app';

void runUntilSignal('billing', async () => {
  const { env, providers } = loadEnvironment();
  const databaseUrl = requireDistributedSetting(env.DATABASE_URL, 'DATABASE_URL', 'billing owns accounts, keys and the ledger');
  const adminToken = requireDistributedSetting(env.ADMIN_TOKEN, 'ADMIN_TOKEN', 'it protects the admin API');
  await waitForDependencies(env);
  const app = await startBilling({ env, providers, databaseUrl, adminToken, queue: resolveQueueBackend(env, databaseUrl) });
  return () => drainAndClose(app, { drainMs: env.SHUTDOWN_DRAIN_MS });
});
