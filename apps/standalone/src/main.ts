import { installedServiceLogger } from '@igw/observability';
import { loadEnvironment, runUntilSignal } from '@igw/config';
import { standaloneBanner, standaloneSummary } from './banner';
import { startStandalone } from './standalone';

void runUntilSignal('standalone', async () => {
  const demo = process.argv.includes('--demo');
  const running = await startStandalone({ demo });
  const { env } = loadEnvironment();
  const context = { dataDir: env.DATA_DIR };
  const logger = installedServiceLogger();
  // In JSON every line of the stream must parse: the banner becomes one line of fields.
  if (logger?.writesJson()) logger.record('standalone', 'Inference gateway is running (standalone)', standaloneSummary(running, context));
  else process.stdout.write(standaloneBanner(running, context).join('\n'));
  return running.stop;
});
