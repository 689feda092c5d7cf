import { loadEnvironment, resolveQueueBackend, runUntilSignal, waitForDependencies, warnOfUnusedAdminToken } from '@igw/config';
import { startGateway, stopGateway } from './gateway.app';

void runUntilSignal('gateway', async () => {
  const { env, providers } = loadEnvironment();
  warnOfUnusedAdminToken('gateway', env);
  await waitForDependencies(env);
  const app = await startGateway({ env, providers, queue: resolveQueueBackend(env, env.DATABASE_URL) });
  return () => stopGateway(app, env);
});
