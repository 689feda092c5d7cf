import { Logger } from '@nestjs/common';

/**
 * Runs a service until SIGINT/SIGTERM, then calls its stop function once (closing HTTP,
 * workers and connections) and exits. A second signal exits at once.
 */
export async function runUntilSignal(name: string, start: () => Promise<() => Promise<void>>): Promise<void> {
  const logger = new Logger(name);
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    logger.log(`${signal}: shutting down`);
    try {
      await stop?.();
      process.exit(0);
    } catch (error) {
      logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
  };
  process.on('SIGINT', (signal) => void shutdown(signal));
  process.on('SIGTERM', (signal) => void shutdown(signal));
  try {
    stop = await start();
    if (stopping) await stop();
  } catch (error) {
    logger.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
