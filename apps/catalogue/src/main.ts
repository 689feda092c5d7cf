import { drainAndClose } from '@igw/http';
import { loadEnvironment, requireDistributedSetting, resolveQueueBackend, runUntilSignal, waitForDependencies } from '@igw/config';
import { startCatalogue } from './catalogue.app';

void runUntilSignal('catalogue', async () => {
  const { env, providers } = loadEnvironment();
  const databaseUrl = requireDistributedSetting(env.DATABASE_URL, 'DATABASE_URL', 'the catalogue service owns the model tables');
  const adminToken = requireDistributedSetting(env.ADMIN_TOKEN, 'ADMIN_TOKEN', 'it protects the admin API');
  await waitForDependencies(env);
  const app = await startCatalogue({ env, providers, databaseUrl, adminToken, queue: resolveQueueBackend(env, databaseUrl) });
  return () => drainAndClose(app, { drainMs: env.SHUTDOWN_DRAIN_MS });
});
