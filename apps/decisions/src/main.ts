import { drainAndClose, loadEnvironment, requireDistributedSetting, resolveQueueBackend, runUntilSignal, waitForDependencies } from '@igw/platform';
import { startDecisions } from './decisions.app';

void runUntilSignal('decisions', async () => {
  const { env, providers } = loadEnvironment();
  requireDistributedSetting(env.ADMIN_TOKEN, 'ADMIN_TOKEN', 'every service of a distributed install shares it');
  await waitForDependencies(env);
  const app = await startDecisions({ env, providers, adminToken: env.ADMIN_TOKEN, queue: resolveQueueBackend(env, env.DATABASE_URL) });
  return () => drainAndClose(app, { drainMs: env.SHUTDOWN_DRAIN_MS });
});
