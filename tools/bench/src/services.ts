import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus } from 'node:os';
import path from 'node:path';
import { dropRedisNamespace } from '@igw/messaging';
import { createScratchDatabase, findFreePort } from '@igw/persistence';
import { Client } from 'pg';
import type { LoadPlan, StreamEvents } from './load';

// Runs from dist/tools/bench/src.
export const ROOT = path.resolve(__dirname, '../../../..');
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';
/** Limits stay on (every request is counted) but set high enough never to refuse one. */
export const BENCH_LIMITS = { RATE_LIMIT_RPM: '1000000000', RATE_LIMIT_CONCURRENCY: '100000' };

const pinned = (core: number) => (existsSync('/usr/bin/taskset') ? ['taskset', '-c', String(core)] : []);

/** Billing and the catalogue run at the lowest priority: their work would otherwise take core 1 from the load generator and the emulator. */
const background = existsSync('/usr/bin/nice') ? ['nice', '-n', '19'] : [];

export interface StartOptions {
  core: number;
  nodeArgs?: string[];
  lowPriority?: boolean;
  /** The checkout whose dist/ to run (this one by default). */
  root?: string;
}

export function start(entry: string, env: NodeJS.ProcessEnv, options: StartOptions): ChildProcess {
  const root = options.root ?? ROOT;
  const [command, ...prefix] = [...(options.lowPriority ? background : []), ...pinned(options.core), process.execPath];
  return spawn(command, [...prefix, ...(options.nodeArgs ?? []), path.join(root, 'dist', entry)], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The CPU the figures were taken on, and the queue the services used: the same VM class has
 * run on hosts whose CPU time per request differed threefold, so a table without them cannot be
 * compared with another.
 */
export function machineDescription(): string {
  const queue = `queue: ${process.env.REDIS_URL ? 'Redis' : 'PostgreSQL'}`;
  const cores = cpus();
  const [first] = cores;
  if (!first) return `unknown CPU; ${queue}`;
  // VMs often report no speed to libuv; the kernel's cpuinfo still has the clock it measured.
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const megahertz = first.speed || Math.round(Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(cpuinfo)?.[1] ?? 0));
  return `${cores.length} × ${first.model.trim()}${megahertz ? ` at ${megahertz} MHz` : ''}; ${queue}`;
}

/** BENCH_PROFILE_DIR: the Node.js arguments that write a V8 CPU profile of a gateway there (one file per process; open it in Chrome DevTools). */
export function profilingArguments(): string[] {
  return process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
}

export async function waitHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await fetch(url).then((response) => response.ok, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

/** The minimal proxy has no health route: it is up once it accepts a connection. */
export async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      }).on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** The fields of a /proc/<pid>/stat line after the command name (which may hold spaces): state, ppid, ... */
const statFields = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

/** CPU seconds (user + system) a process has used, from /proc. */
export async function cpuSeconds(pid: number): Promise<number> {
  const fields = statFields(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''));
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Backends {
  /** Base URL of the upstream emulator. */
  emulator: string;
  /** Queue and admin settings every service of the run shares. */
  common: NodeJS.ProcessEnv;
}

/** Starts the emulator, the catalogue (the end-to-end chat catalogue unless `catalogueFile`) and billing on core 1 and waits until they answer. */
export async function startBackends(databaseUrl: string, queuePrefix: string, children: ChildProcess[], catalogueFile = path.join(ROOT, 'e2e/fixtures/chat-catalogue.yaml')): Promise<Backends & { billing: string }> {
  const [emulatorPort, billingPort, cataloguePort] = await Promise.all([findFreePort(), findFreePort(), findFreePort()]);
  const queue = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: queuePrefix } : { DATABASE_URL: databaseUrl };
  const common = { ...queue };
  children.push(start('tools/emulator/src/main.js', { EMULATOR_PORT: String(emulatorPort) }, { core: 1 }));
  children.push(start('apps/catalogue/src/main.js', { ...common, ADMIN_TOKEN, DATABASE_URL: databaseUrl, CATALOGUE_PORT: String(cataloguePort), CATALOGUE_FILE: catalogueFile }, { core: 1, lowPriority: true }));
  // Billing answers key look-ups but applies no usage during the run unless BENCH_LEDGER=1: its
  // ledger transactions (and PostgreSQL's work for them) would share core 1 with the load
  // generator and the emulator, where a deployment runs them on machines of their own. The
  // gateway's part of metering (pricing, holds, journal, queueing every event) is measured.
  const ledgerWorkers = process.env.BENCH_LEDGER === '1' ? '16' : '0';
  children.push(start('apps/billing/src/main.js', { ...common, ADMIN_TOKEN, DATABASE_URL: databaseUrl, BILLING_PORT: String(billingPort), LEDGER_WORKERS: ledgerWorkers }, { core: 1, lowPriority: true }));
  const emulator = `http://127.0.0.1:${emulatorPort}`;
  const billing = `http://127.0.0.1:${billingPort}`;
  await Promise.all([waitHealthy(`${emulator}/v1/models`), waitHealthy(`http://127.0.0.1:${cataloguePort}/healthz`), waitHealthy(`${billing}/healthz`)]);
  return { emulator, billing, common };
}

/** The environment of a gateway under test: limits on, the emulator as its OpenAI upstream. */
export function gatewayEnvironment(backends: Backends, port: number): NodeJS.ProcessEnv {
  return { ...backends.common, ...BENCH_LIMITS, PORT: String(port), OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: `${backends.emulator}/v1` };
}

/** A paid account with plenty of credits and one API key for it. */
export async function createBenchKey(billing: string): Promise<string> {
  const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const account = (await (await fetch(`${billing}/admin/v1/accounts`, { method: 'POST', headers: adminHeaders, body: JSON.stringify({ credits: 1e12, plan: 'paid' }) })).json()) as { id: string };
  const { key } = (await (await fetch(`${billing}/admin/v1/accounts/${account.id}/keys`, { method: 'POST', headers: adminHeaders, body: '{}' })).json()) as { key: string };
  return key;
}

/**
 * A streamed answer of 20 content chunks (the emulator streams its reply word by word:
 * six words of its own, then the user's fourteen) with the usage chunk at its end, as
 * clients that meter their own use ask for it.
 */
const STREAMED_QUESTION = 'Hello, benchmark. How fast is the gateway when streaming an answer word by word?';

const PACED_CHUNK_DELAY_MS = 3;
/**
 * Streams paced as a model generates them (the emulator waits 3 ms between events), for the
 * first chunk under load: with instant streams a closed loop's first chunk is its cycle
 * time (concurrency ÷ throughput), which measures throughput, not latency. The gateway's
 * catalogue model `paced` (e2e/fixtures/chat-catalogue.yaml) has this upstream model.
 */
export const PACED_UPSTREAM_MODEL = `gpt-4o-mini@chunk-delay=${PACED_CHUNK_DELAY_MS}`;
export const PACED_GATEWAY_MODEL = 'paced';
/** A paced stream's length: the role chunk, 20 content chunks, the finish and the usage chunk. */
const PACED_STREAM_MS = 23 * PACED_CHUNK_DELAY_MS;

/** Paced streams at `concurrency`, their workers started spread over a stream's length (see LoadPlan.startSpreadMs). */
export function pacedLoadPlan(target: { baseUrl: string; key: string; model: string }, concurrency: number, seconds: number): LoadPlan {
  return { ...chatLoadPlan(target, concurrency, true, seconds), startSpreadMs: PACED_STREAM_MS / concurrency };
}

/** The bench's chat load against `baseUrl`: the same body for every target and run. */
export function chatLoadPlan(target: { baseUrl: string; key: string; model: string }, concurrency: number, stream: boolean, seconds: number): LoadPlan {
  const body = stream
    ? { model: target.model, messages: [{ role: 'user', content: STREAMED_QUESTION }], stream, stream_options: { include_usage: true } }
    : { model: target.model, messages: [{ role: 'user', content: 'Hello, benchmark. How fast is the gateway?' }], stream };
  return {
    url: `${target.baseUrl}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.key}` },
    body: JSON.stringify(body),
    concurrency,
    durationMs: seconds * 1000,
    maxRequests: 2_000_000,
    stream,
  };
}

/** The first and last events of a Responses stream and of a Messages stream. */
export const RESPONSES_STREAM_EVENTS: StreamEvents = { first: 'event: response.created', last: 'event: response.completed' };
export const MESSAGES_STREAM_EVENTS: StreamEvents = { first: 'event: message_start', last: 'event: message_stop' };

/**
 * The streamed question of chatLoadPlan through the gateway's Responses API, as Codex sends it
 * (`store: false`): its added first chunk is compared with chat completions' own.
 */
export function responsesLoadPlan(target: { baseUrl: string; key: string; model: string }, concurrency: number, seconds: number): LoadPlan {
  return {
    ...chatLoadPlan(target, concurrency, true, seconds),
    url: `${target.baseUrl}/v1/responses`,
    body: JSON.stringify({ model: target.model, input: STREAMED_QUESTION, stream: true, store: false }),
    streamEvents: RESPONSES_STREAM_EVENTS,
  };
}

/** The streamed question of chatLoadPlan through the gateway's Messages API, with the key as Anthropic's SDK sends it. */
export function messagesLoadPlan(target: { baseUrl: string; key: string; model: string }, concurrency: number, seconds: number): LoadPlan {
  return {
    ...chatLoadPlan(target, concurrency, true, seconds),
    url: `${target.baseUrl}/v1/messages`,
    headers: { 'content-type': 'application/json', 'x-api-key': target.key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: target.model, max_tokens: 500, messages: [{ role: 'user', content: STREAMED_QUESTION }], stream: true }),
    streamEvents: MESSAGES_STREAM_EVENTS,
  };
}

/**
 * Every load shape the measurements use, for long enough that V8 has optimized the code they
 * run: its optimizing compiler works on a thread of the gateway's own (pinned) core, and
 * compiles of several milliseconds would otherwise fall into the first measurements.
 */
export async function warmUp(run: (concurrency: number, stream: boolean, seconds: number) => Promise<unknown>): Promise<void> {
  await run(64, false, 3);
  await run(16, true, 2);
  await run(1, false, 2);
  await run(1, true, 2);
}

/**
 * Pins the bench's embedded PostgreSQL (every process of it; the connections it forks later
 * inherit the setting) to core 1 with the load generator and the emulator: unpinned, its work
 * for the gateway's usage batches also lands on core 0 and takes the gateway's core from it
 * for up to a scheduler slice (milliseconds), where a deployment runs it on a machine of its
 * own. It keeps its normal priority, so it keeps up with the batches at saturation. A server
 * named by DATABASE_URL is not the bench's to move: it is left as it runs.
 */
async function pinEmbeddedPostgres(databaseUrl: string): Promise<void> {
  if (!existsSync('/usr/bin/taskset')) return;
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  let dataDirectory: string;
  try {
    dataDirectory = (await client.query<{ setting: string }>(`SELECT setting FROM pg_settings WHERE name = 'data_directory'`)).rows[0].setting;
  } finally {
    await client.end();
  }
  const postmaster = Number(readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  try {
    for (const pid of [postmaster, ...childrenOf(postmaster)]) execFileSync('taskset', ['-a', '-p', '-c', '1', String(pid)], { stdio: 'ignore' });
  } catch (error) {
    process.stdout.write(`note: PostgreSQL could not be pinned to core 1 (${error instanceof Error ? error.message : String(error)})\n`);
  }
}

function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      let stat = '';
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        // exited meanwhile
      }
      return Number(statFields(stat)[1]) === parent;
    })
    .map(Number);
}

/**
 * Runs a benchmark with its scratch database and queue namespace, and always cleans up:
 * child processes stopped, the database dropped, the Redis keys deleted.
 */
export function runBench(body: (setup: { databaseUrl: string; queuePrefix: string; children: ChildProcess[] }) => Promise<void>): void {
  const run = async () => {
    const database = await createScratchDatabase(process.env.DATABASE_URL);
    if (!process.env.DATABASE_URL) await pinEmbeddedPostgres(database.url);
    const queuePrefix = `igwbench${Date.now()}`;
    const children: ChildProcess[] = [];
    try {
      await body({ databaseUrl: database.url, queuePrefix, children });
    } finally {
      for (const child of children.reverse()) child.kill('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await database.drop();
      if (process.env.REDIS_URL) await dropRedisNamespace(process.env.REDIS_URL, queuePrefix);
    }
  };
  run().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
