import { loadEnvironment, requireDistributedSetting, resolveQueueBackend, runUntilSignal, waitForDependencies } from '@igw/platform';
import { startGateway, stopGateway } from './gateway.app';

void runUntilSignal('gateway', async () => {
  const { env, providers } = loadEnvironment();
  requireDistributedSetting(env.ADMIN_TOKEN, 'ADMIN_TOKEN', 'every service of a distributed install shares it');
  await waitForDependencies(env);
  const app = await startGateway({ env, providers, adminToken: env.ADMIN_TOKEN, queue: resolveQueueBackend(env, env.DATABASE_URL) });
  return () => stopGateway(app, env);
});
