import { drainAndClose } from '@igw/http';
import { loadEnvironment, resolveQueueBackend, runUntilSignal, waitForDependencies, warnOfUnusedAdminToken } from '@igw/config';
import { startDecisions } from './decisions.app';

void runUntilSignal('decisions', async () => {
  const { env, providers } = loadEnvironment();
  warnOfUnusedAdminToken('decisions', env);
  await waitForDependencies(env);
  const app = await startDecisions({ env, providers, queue: resolveQueueBackend(env, env.DATABASE_URL) });
  return () => drainAndClose(app, { drainMs: env.SHUTDOWN_DRAIN_MS });
});
