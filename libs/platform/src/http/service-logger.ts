import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** Nest's own start-up lines (one per module and per route): detail, not news. */
const FRAMEWORK_START_CONTEXTS = ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'];

/** The levels shown at LOG_LEVEL `level`: it and every more severe one. */
export function logLevelsUpTo(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}

/**
 * The one logger of a process. Nest's start-up lines are shown at `debug`; while a start-up is
 * quiet (the standalone app, whose banner says what matters), so are the `log` lines of the
 * contexts it names, until `endQuietStart()`.
 */
export class ServiceLogger extends ConsoleLogger {
  private quietContexts = new Set<string>();

  setLevel(level: LogLevel): void {
    this.setLogLevels(logLevelsUpTo(level));
  }

  quietStart(contexts: readonly string[]): void {
    this.quietContexts = new Set(contexts);
  }

  endQuietStart(): void {
    this.quietContexts.clear();
  }

  override log(message: unknown, ...rest: unknown[]): void {
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : this.context;
    if (context && (FRAMEWORK_START_CONTEXTS.includes(context) || this.quietContexts.has(context))) {
      super.debug(message, ...rest);
      return;
    }
    super.log(message, ...rest);
  }

  override error(message: unknown, ...rest: unknown[]): void {
    // Nest reports a port it cannot have before `startHttpApp` names the variable that sets it.
    if (rest.at(-1) === 'NestApplication' && /\b(EADDRINUSE|EACCES)\b/.test(String(message))) {
      super.debug(String(message), 'NestApplication');
      return;
    }
    super.error(message, ...rest);
  }
}

let processLogger: ServiceLogger | undefined;

/** The process's logger at `level`, installed as Nest's: every `new Logger(context)` writes through it. */
export function serviceLogger(level: LogLevel): ServiceLogger {
  if (!processLogger) {
    processLogger = new ServiceLogger({ logLevels: logLevelsUpTo(level) });
    Logger.overrideLogger(processLogger);
  } else {
    processLogger.setLevel(level);
  }
  return processLogger;
}
