import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import pino, { type Logger as PinoLogger } from 'pino';
import { redactSecrets } from './secrets';

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** Nest's levels by pino's names. */
const PINO_LEVELS: Record<LogLevel, pino.Level> = { fatal: 'fatal', error: 'error', warn: 'warn', log: 'info', debug: 'debug', verbose: 'trace' };

/** `pretty`: Nest's console lines, for a person at a terminal; `json`: one JSON object a line (pino), for a log pipeline. */
export type LogFormat = 'pretty' | 'json';

/** Nest's own start-up lines (one per module and per route): detail, not news. */
const FRAMEWORK_START_CONTEXTS = ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'];

/**
 * Colours for a person at a terminal only: Nest colours unless NO_COLOR, so a log piped to a file
 * or a collector would carry escape codes. FORCE_COLOR asks for them anyway (as Node's own tools).
 */
export function colorsWanted(env: NodeJS.ProcessEnv, isTerminal: boolean | undefined): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0';
  return isTerminal === true;
}

/** The levels shown at LOG_LEVEL `level`: it and every more severe one. */
export function logLevelsUpTo(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}

/** One request as the access log records it; never the key itself, never the prompt unless LOG_PROMPTS. */
export interface AccessLogEntry {
  requestId: string;
  clientRequestId: string | undefined;
  service: string;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  /** The client's address, read through TRUSTED_PROXIES' hops. */
  clientAddress: string | undefined;
  keyPrefix: string | undefined;
  /** The catalogue model the request ran, or for a request refused before that, the name it asked for. */
  model: string | undefined;
  provider: string | undefined;
  /** The deployment that answered a paid request, `<connection>/<upstream>`. */
  deployment: string | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  credits: number | undefined;
  prompt: unknown;
  /** Why the request failed (its error body's message). */
  error: string | undefined;
}

/**
 * The one logger of a process, installed as Nest's. Nest's start-up lines are shown at `debug`;
 * while a start-up is quiet (the standalone app, whose banner says what matters), so are the
 * `log` lines of the contexts it names, until `endQuietStart()`. Secrets the process knows (the
 * admin token, provider keys, API keys) are replaced in every line, whatever its format.
 */
export class ServiceLogger extends ConsoleLogger {
  private quietContexts = new Set<string>();
  private json?: PinoLogger;
  private enabled: ReadonlySet<LogLevel>;

  constructor(level: LogLevel, format: LogFormat) {
    super({ logLevels: logLevelsUpTo(level), colors: colorsWanted(process.env, process.stdout.isTTY) });
    this.enabled = new Set(logLevelsUpTo(level));
    this.setFormat(format);
  }

  setLevel(level: LogLevel): void {
    this.setLogLevels(logLevelsUpTo(level));
    this.enabled = new Set(logLevelsUpTo(level));
  }

  setFormat(format: LogFormat): void {
    if (format === 'pretty') {
      this.json = undefined;
      return;
    }
    // Written asynchronously (pino flushes what is left when the process exits): a line per request must not block the event loop.
    this.json ??= pino(
      {
        level: 'trace',
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: ['authorization', 'headers.authorization', 'headers["api-key"]', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'apiKey', 'adminToken', 'token'], censor: '[REDACTED]' },
      },
      pino.destination({ dest: 1, sync: false }),
    );
  }

  quietStart(contexts: readonly string[]): void {
    this.quietContexts = new Set(contexts);
  }

  endQuietStart(): void {
    this.quietContexts.clear();
  }

  /** Writes what was buffered: before a deliberate exit. */
  flush(): void {
    this.json?.flush();
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

  /** Whether lines are written as JSON (LOG_FORMAT=json). */
  writesJson(): boolean {
    return this.json !== undefined;
  }

  /** One JSON line at `info` with `fields` beside the message (LOG_FORMAT=json only: the console format has its own text). */
  record(context: string, message: string, fields: Record<string, unknown>): void {
    this.json?.info({ context, ...fields }, message);
  }

  /** Whether access-log lines are written at the level set: when not, the caller builds none. */
  accessLogged(): boolean {
    return this.enabled.has(this.json ? 'log' : 'debug');
  }

  /**
   * The access-log line of one request: at `log` level in JSON (a log pipeline wants every
   * request), at `debug` in the console format (a person at a terminal reads the banner).
   */
  access(entry: AccessLogEntry): void {
    if (this.json) {
      this.json.info({ context: 'access', ...entry }, 'request');
      return;
    }
    const usage = entry.model ? ` model=${entry.model} provider=${entry.provider ?? '-'} deployment=${entry.deployment ?? '-'} tokens=${entry.inputTokens ?? 0}/${entry.outputTokens ?? 0} credits=${entry.credits ?? 0}` : '';
    const client = entry.clientRequestId ? ` client_request_id=${entry.clientRequestId}` : '';
    const error = entry.error === undefined ? '' : ` error=${JSON.stringify(entry.error)}`;
    super.debug(
      `${entry.method} ${entry.route} ${entry.status} ${entry.durationMs.toFixed(1)}ms client=${entry.clientAddress ?? '-'} key=${entry.keyPrefix ?? '-'}${usage} request_id=${entry.requestId}${client}${error}`,
      'access',
    );
  }

  protected override printMessages(
    messages: unknown[],
    context = '',
    logLevel: LogLevel = 'log',
    writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    const redacted = messages.map(redactMessage);
    if (!this.json) {
      super.printMessages(redacted, context, logLevel, writeStreamType, errorStack, params);
      return;
    }
    const stack = typeof errorStack === 'string' ? redactSecrets(errorStack) : undefined;
    for (const message of redacted) {
      const fields = { context: context || undefined, stack };
      if (typeof message === 'string') this.json[PINO_LEVELS[logLevel]](fields, message);
      else this.json[PINO_LEVELS[logLevel]]({ ...fields, data: message });
    }
  }

  protected override printStackTrace(stack: string): void {
    // In JSON the stack is a field of the line itself.
    if (this.json) return;
    // Nest calls this for every error line, with or without a stack.
    super.printStackTrace(typeof stack === 'string' ? redactSecrets(stack) : stack);
  }
}

function redactMessage(message: unknown): unknown {
  if (typeof message === 'string') return redactSecrets(message);
  if (message instanceof Error) return redactSecrets(message.message);
  return message;
}

let processLogger: ServiceLogger | undefined;

/** The process's logger at `level` and in `format`, installed as Nest's: every `new Logger(context)` writes through it. */
export function serviceLogger(level: LogLevel, format: LogFormat = 'pretty'): ServiceLogger {
  if (!processLogger) {
    processLogger = new ServiceLogger(level, format);
    Logger.overrideLogger(processLogger);
  } else {
    processLogger.setLevel(level);
    processLogger.setFormat(format);
  }
  return processLogger;
}

/** The process's logger, once a service installed it. */
export function installedServiceLogger(): ServiceLogger | undefined {
  return processLogger;
}
