import { loadEnvironment, runUntilSignal } from '@igw/platform';
import { standaloneBanner } from './banner';
import { startStandalone } from './standalone';

void runUntilSignal('standalone', async () => {
  const demo = process.argv.includes('--demo');
  const running = await startStandalone({ demo });
  const { env } = loadEnvironment();
  const lines = standaloneBanner(running, { dataDir: env.DATA_DIR, creditsPerUsd: env.CREDITS_PER_USD });
  process.stdout.write(lines.join('\n'));
  return running.stop;
});
