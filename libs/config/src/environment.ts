import path from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import { trustedRanges } from './client-address';
import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsPositive, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';
import { registerLogSecrets } from '@igw/observability';

const toNumber = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
/** `true` / `false` (any case); any other value is left as it is, for the validator to name. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const lower = value.trim().toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : value;
};

/**
 * Every environment variable the services read, with its default. This class is the
 * only reader of process.env (the README's configuration table mirrors it).
 */
export class Environment {
  @IsOptional() @IsString() @Transform(emptyToUndefined) HOST: string = '127.0.0.1';
  @Transform(toNumber) @IsInt() @Min(0) @Max(65535) PORT: number = 8080;
  @Transform(toNumber) @IsInt() @Min(0) @Max(65535) BILLING_PORT: number = 8081;
  @Transform(toNumber) @IsInt() @Min(0) @Max(65535) CATALOGUE_PORT: number = 8082;
  @Transform(toNumber) @IsInt() @Min(0) @Max(65535) DECISIONS_PORT: number = 8083;

  @IsString() DATA_DIR: string = '.data';
  /** The gateway's usage journal (events not yet accepted by the queue); default `<DATA_DIR>/usage-journal`. One per gateway process. */
  @IsOptional() @Transform(emptyToUndefined) @IsString() USAGE_JOURNAL_DIR?: string;
  @IsOptional() @Transform(emptyToUndefined) @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;
  @IsOptional() @Transform(emptyToUndefined) @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;
  /** A YAML file of named upstream connections (docs/configuration.md), re-read when it changes; the built-in providers' variables keep working beside it. */
  @IsOptional() @Transform(emptyToUndefined) @IsString() PROVIDERS_FILE?: string;
  /** Redis key prefix and relay namespace; lets several installations share one Redis. */
  @IsString() @Matches(/^[a-zA-Z0-9_-]+$/) QUEUE_PREFIX: string = 'igw';
  /** PostgreSQL schema for BullMQ's own tables when the queue runs on PostgreSQL. */
  @IsString() @Matches(/^[a-z_][a-z0-9_]*$/) QUEUE_SCHEMA: string = 'bullmq';

  @IsOptional() @Transform(emptyToUndefined) @IsString() @MinLength(16, { message: 'ADMIN_TOKEN must be at least 16 characters' })
  ADMIN_TOKEN?: string;

  @Transform(toNumber) @IsNumber() @IsPositive() CREDITS_PER_USD: number = 2_000_000;
  @IsString() @Matches(/^\d+(kb|mb)?$/i) BODY_LIMIT: string = '10mb';
  /**
   * The gateway serves its busiest routes (`POST /v1/chat/completions`, `/v1/responses`,
   * `/v1/messages`, `/v1/messages/count_tokens`) straight from Node's server, outside Express
   * and Nest; false sends every request through them (and their global guards, interceptors and middleware).
   */
  @Transform(toBoolean) @IsBoolean({ message: 'DIRECT_ROUTES must be true or false' }) DIRECT_ROUTES: boolean = true;
  /** The former name of DIRECT_ROUTES, still read: false turns the direct routes off too. */
  @IsOptional() @Transform(toBoolean) @IsBoolean({ message: 'CHAT_FAST_PATH must be true or false' }) CHAT_FAST_PATH?: boolean;
  @Transform(toNumber) @IsInt() @Min(100) RPC_TIMEOUT_MS: number = 5_000;
  @Transform(toNumber) @IsInt() @Min(1_000) KEY_CACHE_TTL_MS: number = 60_000;
  /** Usage batches one billing process applies at once; 0 makes it an API and key look-up replica only. */
  @Transform(toNumber) @IsInt() @Min(0) @Max(256) LEDGER_WORKERS: number = 16;
  /**
   * How long an upstream call waits for its answer (a stream: for each read), unless its model
   * sets `routing.timeoutSeconds`; a call that runs into it after its prompt was sent is billed the prompt.
   */
  @Transform(toNumber) @IsInt() @Min(1_000) UPSTREAM_TIMEOUT_MS: number = 120_000;
  /**
   * How long a stopping service lets running requests and streams (and queue workers their
   * current jobs) finish before it cuts them off; below Kubernetes' default 30 s grace period.
   */
  @Transform(toNumber) @IsInt() @Min(0) SHUTDOWN_DRAIN_MS: number = 25_000;
  /** Requests per minute per API key, unless the account overrides it. */
  @Transform(toNumber) @IsInt() @Min(1) RATE_LIMIT_RPM: number = 600;
  /** Requests in flight at once per API key, unless the account overrides it. */
  @Transform(toNumber) @IsInt() @Min(1) RATE_LIMIT_CONCURRENCY: number = 20;
  /** Requests per hour for an account on the free plan. */
  @Transform(toNumber) @IsInt() @Min(1) FREE_TIER_HOURLY_LIMIT: number = 100;
  @IsIn(['error', 'warn', 'log', 'debug', 'verbose']) LOG_LEVEL: 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';
  /** `pretty`: the console lines a person reads; `json`: one JSON object a line (pino), with an access-log line per request. */
  @IsIn(['pretty', 'json'], { message: 'LOG_FORMAT must be pretty or json' }) LOG_FORMAT: 'pretty' | 'json' = 'pretty';
  /** Adds each request's prompt (chat messages, embedding input) to its access-log line: off, as prompts are the clients' data. */
  @Transform(toBoolean) @IsBoolean({ message: 'LOG_PROMPTS must be true or false' }) LOG_PROMPTS: boolean = false;
  /**
   * Chat fields that reach the operator's own provider account, refused unless enabled: `file_id`
   * (file parts naming files uploaded there), `store: true` (completions stored there) and `metadata`.
   */
  @Transform(toBoolean) @IsBoolean({ message: 'ALLOW_UPSTREAM_FILE_IDS must be true or false' }) ALLOW_UPSTREAM_FILE_IDS: boolean = false;
  @Transform(toBoolean) @IsBoolean({ message: 'ALLOW_UPSTREAM_STORE must be true or false' }) ALLOW_UPSTREAM_STORE: boolean = false;
  @Transform(toBoolean) @IsBoolean({ message: 'ALLOW_UPSTREAM_METADATA must be true or false' }) ALLOW_UPSTREAM_METADATA: boolean = false;
  /** Where traces go (OTLP over HTTP, e.g. http://otel-collector:4318); unset: no traces are recorded. */
  @IsOptional() @Transform(emptyToUndefined) @Matches(/^https?:\/\//, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  @IsOptional() @Transform(emptyToUndefined) @IsString() CATALOGUE_FILE?: string;
  /** The largest non-streamed upstream answer the gateway reads (32 MiB); past it the call ends with a 502. */
  @Transform(toNumber) @IsInt() @Min(1_024) UPSTREAM_MAX_RESPONSE_BYTES: number = 32 * 1024 * 1024;
  /** How much of an upstream error answer is read for its reason (64 KiB); the rest is dropped. */
  @Transform(toNumber) @IsInt() @Min(1_024) UPSTREAM_MAX_ERROR_BYTES: number = 64 * 1024;
  /** The largest single server-sent event (or line) of an upstream stream (8 MiB); past it the stream ends. */
  @Transform(toNumber) @IsInt() @Min(1_024) UPSTREAM_MAX_EVENT_BYTES: number = 8 * 1024 * 1024;
  /** The longest an upstream stream may run (30 min), unless its model sets `routing.maxStreamSeconds`. */
  @Transform(toNumber) @IsInt() @Min(1_000) UPSTREAM_STREAM_MAX_MS: number = 30 * 60 * 1000;
  /** The largest media file (a speech-to-text URL, an image an upstream answered by URL) the gateway fetches (25 MiB). */
  @Transform(toNumber) @IsInt() @Min(1_024) MEDIA_FETCH_MAX_BYTES: number = 25 * 1024 * 1024;
  /** The longest one media fetch may take, redirects and body included (30 s). */
  @Transform(toNumber) @IsInt() @Min(100) MEDIA_FETCH_TIMEOUT_MS: number = 30_000;
  /**
   * Fetched media one gateway process holds at once (256 MiB), from the first byte read until
   * its request is over: past it a speech-to-text request gets 503 with `retry-after`. At least
   * MEDIA_FETCH_MAX_BYTES, so a file of the largest size can be fetched.
   */
  @Transform(toNumber) @IsInt() @Min(1_024) MEDIA_IN_FLIGHT_MAX_BYTES: number = 256 * 1024 * 1024;
  /**
   * The fraction of MEDIA_IN_FLIGHT_MAX_BYTES one API key's fetches may hold at once (half), but
   * never less than one file of MEDIA_FETCH_MAX_BYTES: a key that floods the gateway with
   * fetches leaves the rest of the budget to the other keys. Past it, `/stt` answers 429.
   */
  @Transform(toNumber) @IsNumber() @IsPositive() @Max(1) MEDIA_IN_FLIGHT_KEY_SHARE: number = 0.5;
  /** Comma-separated `host` or `host:port` entries fetched even when they resolve to loopback, private or other forbidden addresses (IPv6 in brackets). */
  @IsOptional() @Transform(emptyToUndefined) @IsString()
  @Matches(/^\s*(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?(\s*,\s*(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(:\d{1,5})?)*\s*,?\s*$/, {
    message: 'MEDIA_FETCH_ALLOWLIST must be a comma-separated list of host or host:port entries (IPv6 addresses in brackets)',
  })
  MEDIA_FETCH_ALLOWLIST?: string;
  /**
   * The longest audio POST /stt transcribes (1 h): its price is the credit hold, which must fit
   * before the audio is fetched; a request may lower it with `max_duration_seconds`.
   */
  @Transform(toNumber) @IsInt() @Min(1) @Max(86_400) STT_MAX_AUDIO_SECONDS: number = 3_600;
  /**
   * The key that signs the image links the gateway serves (`response_format: "url"` for images
   * whose upstream answered bytes), at least 32 characters; the same on every replica. Unset:
   * with REDIS_URL, one generated once and kept in Redis beside the images (every replica reads
   * it); without, one generated per process (standalone holds the images in its own memory).
   */
  @IsOptional() @Transform(emptyToUndefined) @IsString() @MinLength(32, { message: 'MEDIA_URL_SECRET must be at least 32 characters' })
  MEDIA_URL_SECRET?: string;
  /**
   * The image bytes one standalone gateway keeps for its signed links (256 MiB); past it the
   * oldest go first. With REDIS_URL the images live in Redis for their hour, each at most MEDIA_FETCH_MAX_BYTES.
   */
  @Transform(toNumber) @IsInt() @Min(1_024) HOSTED_IMAGES_MAX_BYTES: number = 256 * 1024 * 1024;
  /** Longest a response cache look-up may take before the request goes on as a miss: the cache must never slow a request down. */
  @Transform(toNumber) @IsInt() @Min(1) RESPONSE_CACHE_LOOKUP_TIMEOUT_MS: number = 5;
  /** Largest response cache entry, compressed; a larger answer is not stored. */
  @Transform(toNumber) @IsInt() @Min(1_024) RESPONSE_CACHE_MAX_ENTRY_BYTES: number = 1024 * 1024;
  /** Bytes of response cache entries one account may hold; past it, its own oldest entries go, never another account's. */
  @Transform(toNumber) @IsInt() @Min(1_024) RESPONSE_CACHE_ACCOUNT_BYTES: number = 64 * 1024 * 1024;
  /** Longest a command to the limits' Redis may take; beyond it the gateway counts limits locally until Redis answers again. */
  @Transform(toNumber) @IsInt() @Min(10) REDIS_COMMAND_TIMEOUT_MS: number = 500;
  /**
   * How long a request's concurrency slot and credit hold outlive a replica that died; a
   * running request renews them every third of this, however long it runs.
   */
  @Transform(toNumber) @IsInt() @Min(300) REQUEST_HOLD_LAPSE_MS: number = 60_000;
  /** Usage events a gateway keeps in memory while the queue does not take them; beyond, they wait in the journal only. */
  @Transform(toNumber) @IsInt() @Min(1) USAGE_MAX_BUFFERED_EVENTS: number = 100_000;
  /** Key look-ups one gateway process has at billing at once; more wait their turn, client by client. */
  @Transform(toNumber) @IsInt() @Min(1) KEY_LOOKUPS_IN_FLIGHT: number = 32;
  /** Key look-ups one client address has at billing at once (from one gateway process). */
  @Transform(toNumber) @IsInt() @Min(1) KEY_LOOKUPS_IN_FLIGHT_PER_CLIENT: number = 4;
  /** Look-ups of keys billing does not know that one client address may make in a burst; over it: 429. */
  @Transform(toNumber) @IsInt() @Min(1) KEY_LOOKUP_MISS_BURST: number = 20;
  /** How fast that budget comes back, per minute. */
  @Transform(toNumber) @IsInt() @Min(1) KEY_LOOKUP_MISSES_PER_MINUTE: number = 60;
  /**
   * Reverse proxies (comma-separated addresses and CIDR ranges) whose `X-Forwarded-For` names
   * the client, for the per-address look-up budgets above; empty: the connection's address.
   */
  @IsOptional() @Transform(emptyToUndefined) @IsString() TRUSTED_PROXIES?: string;
  /** How long one webhook delivery attempt may take, connection to answer (10 s); longer counts as a failure and is retried. */
  @Transform(toNumber) @IsInt() @Min(100) @Max(60_000) WEBHOOK_TIMEOUT_MS: number = 10_000;
  /** Attempts per webhook event before it is given up (8: about 21 minutes of retries at the default delay). */
  @Transform(toNumber) @IsInt() @Min(1) @Max(25) WEBHOOK_MAX_ATTEMPTS: number = 8;
  /** Wait before a webhook event's second attempt (10 s); each later wait doubles. */
  @Transform(toNumber) @IsInt() @Min(10) @Max(3_600_000) WEBHOOK_RETRY_DELAY_MS: number = 10_000;
  /**
   * Comma-separated `host` or `host:port` entries (IPv6 in brackets) an account's webhook may
   * name even when they resolve to loopback, private or other addresses the media fetches'
   * policy forbids (an internal alert relay); read by billing with MEDIA_FETCH_ALLOWLIST's parser.
   */
  @IsOptional() @Transform(emptyToUndefined) @IsString() WEBHOOK_ALLOWLIST?: string;
  /** How long a stored Responses API response (`store: true`) is kept, in days (fractions allowed): past it, it is gone for every read, and the purge deletes it. */
  @Transform(toNumber) @IsNumber() @IsPositive() RESPONSES_RETENTION_DAYS: number = 30;
  /**
   * Whether an account's API keys share its stored responses (read, continue, delete and
   * reference each other's). Off: a stored response belongs to the key that made it, as keys
   * are often handed to different people or programs.
   */
  @Transform(toBoolean) @IsBoolean({ message: 'RESPONSES_SHARED_PER_ACCOUNT must be true or false' }) RESPONSES_SHARED_PER_ACCOUNT: boolean = false;
  /** Stored Responses API responses one account may keep at once (live, within the retention); past it, requests that would store one get a 403 until some are deleted or expire. */
  @Transform(toNumber) @IsInt() @Min(1) RESPONSES_MAX_PER_ACCOUNT: number = 100_000;
  /** The JSON bytes of stored items one account may keep at once, in megabytes (1,024: a gigabyte); past it, as past RESPONSES_MAX_PER_ACCOUNT. */
  @Transform(toNumber) @IsInt() @Min(1) RESPONSES_MAX_MB_PER_ACCOUNT: number = 1_024;
  /** How often billing deletes the stored responses past their retention. */
  @Transform(toNumber) @IsInt() @Min(1_000) RESPONSES_PURGE_INTERVAL_MS: number = 3_600_000;
  /** How long the gateway waits for the decisions service to answer one POST /v1/decisions (then 504); above UPSTREAM_TIMEOUT_MS, as a fallback decision may make two rounds of calls. */
  @Transform(toNumber) @IsInt() @Min(1_000) DECISIONS_TIMEOUT_MS: number = 300_000;
  /** How long a starting service waits for DATABASE_URL's and REDIS_URL's servers to answer before it exits, naming the one it could not reach. */
  @Transform(toNumber) @IsInt() @Min(0) DEPENDENCY_WAIT_MS: number = 30_000;
}

/** Where the gateway keeps its usage journal: USAGE_JOURNAL_DIR, else `usage-journal` in DATA_DIR. */
export function usageJournalDirectory(env: Pick<Environment, 'DATA_DIR' | 'USAGE_JOURNAL_DIR'>): string {
  return env.USAGE_JOURNAL_DIR ?? path.join(env.DATA_DIR, 'usage-journal');
}

export interface LoadedEnvironment {
  env: Environment;
  /** Upstream provider variables as set (`<PROVIDER>_API_KEY`, `_BASE_URL`, `_ENDPOINT`); each provider knows its names. */
  providers: Record<string, string>;
}

export class EnvironmentError extends Error {}

export function loadEnvironment(source: NodeJS.ProcessEnv = process.env): LoadedEnvironment {
  const env = plainToInstance(Environment, { ...source }, { exposeDefaultValues: true, excludeExtraneousValues: false });
  const errors = validateSync(env, { skipMissingProperties: false, forbidUnknownValues: false });
  if (errors.length > 0) {
    const details = errors.flatMap((error) => Object.values(error.constraints ?? {})).join('; ');
    throw new EnvironmentError(`Invalid configuration: ${details}`);
  }
  if (env.MEDIA_IN_FLIGHT_MAX_BYTES < env.MEDIA_FETCH_MAX_BYTES) {
    throw new EnvironmentError('Invalid configuration: MEDIA_IN_FLIGHT_MAX_BYTES must be at least MEDIA_FETCH_MAX_BYTES');
  }
  try {
    trustedRanges(env.TRUSTED_PROXIES);
  } catch (error) {
    throw new EnvironmentError(`Invalid configuration: ${(error as Error).message}`);
  }
  const providers = readProviderEnvironment(source);
  registerLogSecrets([env.ADMIN_TOKEN, env.MEDIA_URL_SECRET, ...Object.entries(providers).filter(([name]) => PROVIDER_SECRET.test(name)).map(([, value]) => value), ...databasePasswords(env)]);
  return { env, providers };
}

/** The passwords in DATABASE_URL and REDIS_URL, which a connection error may quote. */
function databasePasswords(env: Environment): string[] {
  return [env.DATABASE_URL, env.REDIS_URL].flatMap((url) => {
    try {
      return url ? [decodeURIComponent(new URL(url).password)] : [];
    } catch {
      return [];
    }
  });
}

const PROVIDER_VARIABLE = /^[A-Z][A-Z0-9_]*_(API_KEY|BASE_URL|ENDPOINT)$/;
/**
 * The cloud platforms' variables (libs/providers: bedrock.settings.ts, vertex.settings.ts and the
 * registry): a region or location turns their built-in connection on, a project places it, and
 * Bedrock's API key and Google's credentials file follow the clouds' own names.
 */
const CLOUD_PROVIDER_VARIABLES = new Set(['BEDROCK_REGION', 'AWS_BEARER_TOKEN_BEDROCK', 'VERTEX_LOCATION', 'VERTEX_PROJECT', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_APPLICATION_CREDENTIALS']);
/** Provider variables that hold a key (the log redacts their values). */
const PROVIDER_SECRET = /_API_KEY$|^AWS_BEARER_TOKEN_BEDROCK$/;

function readProviderEnvironment(source: NodeJS.ProcessEnv): Record<string, string> {
  const providers: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value && (PROVIDER_VARIABLE.test(name) || CLOUD_PROVIDER_VARIABLES.has(name))) providers[name] = value;
  }
  return providers;
}
