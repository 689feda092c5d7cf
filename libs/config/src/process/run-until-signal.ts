import { Logger } from '@nestjs/common';
import { installedServiceLogger, stopTracing } from '@igw/observability';
import { surviveClosedOutput } from './closed-output';

const DUPLICATE_SIGNAL_WINDOW_MS = 2_000;

/**
 * Runs a service until SIGINT/SIGTERM/SIGHUP, then calls its stop function once (closing HTTP,
 * workers and connections) and exits. A second signal exits at once, unless it comes
 * right after the first: a terminal's Ctrl-C reaches npm and node alike, and npm may
 * forward its own copy.
 */
export async function runUntilSignal(name: string, start: () => Promise<() => Promise<void>>): Promise<void> {
  surviveClosedOutput();
  const logger = new Logger(name);
  let stop: (() => Promise<void>) | undefined;
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < DUPLICATE_SIGNAL_WINDOW_MS) return;
      logger.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    logger.log(`${signal}: shutting down`);
    try {
      await stop?.();
      await stopTracing();
      installedServiceLogger()?.flush();
      process.exit(0);
    } catch (error) {
      logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
  };
  // SIGHUP: the terminal closed. Without a handler Node dies on the spot, leaving the embedded
  // PostgreSQL (in a process group of its own) running.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, (received) => void shutdown(received));
  try {
    stop = await start();
    if (stoppingSince !== undefined) await stop();
  } catch (error) {
    logger.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
