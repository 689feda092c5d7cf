// npm run bench: the gateway against the emulator versus the emulator directly, with the
// same load generator in one run. The gateway process is pinned to core 0; the load
// generator, the emulator and the other services share core 1. After a warm-up the two
// targets alternate for several rounds and the medians are reported.
// Settings: BENCH_ROUNDS (3), BENCH_SECONDS per measurement (3), DATABASE_URL (else an
// embedded PostgreSQL), REDIS_URL (else BullMQ on PostgreSQL).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createScratchDatabase, findFreePort } from '@igw/persistence';
import { dropRedisNamespace } from '@igw/messaging';
import { median, percentile, runLoad, type LoadPlan, type LoadResult } from './load';

// Runs from dist/tools/bench/src.
const ROOT = path.resolve(__dirname, '../../../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const pinned = (core: number) => (existsSync('/usr/bin/taskset') ? ['taskset', '-c', String(core)] : []);

/**
 * Billing and the catalogue run at the lowest priority: their work (one ledger transaction
 * per request) would otherwise take core 1 from the load generator and the emulator. Usage
 * events queue up meanwhile and are applied after the run, as they would be on a busy day.
 */
const background = existsSync('/usr/bin/nice') ? ['nice', '-n', '19'] : [];

function start(entry: string, env: NodeJS.ProcessEnv, core: number, nodeArgs: string[] = [], lowPriority = false): ChildProcess {
  const [command, ...prefix] = [...(lowPriority ? background : []), ...pinned(core), process.execPath];
  const child = spawn(command, [...prefix, ...nodeArgs, path.join(ROOT, 'dist', entry)], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  return child;
}

async function waitHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await fetch(url).then((response) => response.ok, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

/** CPU seconds (user + system) a process has used, from /proc. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function main(): Promise<void> {
  if (existsSync('/usr/bin/taskset')) execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const database = await createScratchDatabase(process.env.DATABASE_URL);
  const benchPrefix = `igwbench${Date.now()}`;
  const children: ChildProcess[] = [];
  try {
    const [emulatorPort, gatewayPort, billingPort, cataloguePort] = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    const queue = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: benchPrefix } : { DATABASE_URL: database.url };
    const common = { ...queue, ADMIN_TOKEN };
    children.push(start('tools/emulator/src/main.js', { EMULATOR_PORT: String(emulatorPort) }, 1));
    const emulator = `http://127.0.0.1:${emulatorPort}`;
    children.push(start('apps/catalogue/src/main.js', { ...common, DATABASE_URL: database.url, CATALOGUE_PORT: String(cataloguePort), CATALOGUE_FILE: path.join(ROOT, 'e2e/fixtures/chat-catalogue.yaml') }, 1, [], true));
    children.push(start('apps/billing/src/main.js', { ...common, DATABASE_URL: database.url, BILLING_PORT: String(billingPort) }, 1, [], true));
    await Promise.all([waitHealthy(`${emulator}/v1/models`), waitHealthy(`http://127.0.0.1:${cataloguePort}/healthz`), waitHealthy(`http://127.0.0.1:${billingPort}/healthz`)]);
    // BENCH_PROFILE_DIR writes a V8 CPU profile of the gateway there (open it in Chrome DevTools).
    const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
    // Limits stay on (every request is counted) but set high enough never to refuse one.
    const limits = { RATE_LIMIT_RPM: '1000000000', RATE_LIMIT_CONCURRENCY: '100000' };
    const gatewayProcess = start('apps/gateway/src/main.js', { ...common, ...limits, PORT: String(gatewayPort), OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: `${emulator}/v1` }, Number(process.env.BENCH_GATEWAY_CORE ?? 0), profile);
    children.push(gatewayProcess);
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    await waitHealthy(`${gateway}/readyz`);

    const billing = `http://127.0.0.1:${billingPort}`;
    const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const account = (await (await fetch(`${billing}/admin/v1/accounts`, { method: 'POST', headers: adminHeaders, body: JSON.stringify({ credits: 1e12, plan: 'paid' }) })).json()) as { id: string };
    const { key } = (await (await fetch(`${billing}/admin/v1/accounts/${account.id}/keys`, { method: 'POST', headers: adminHeaders, body: '{}' })).json()) as { key: string };

    const messages = [{ role: 'user', content: 'Hello, benchmark. How fast is the gateway?' }];
    const plan = (target: 'direct' | 'gateway', concurrency: number, stream: boolean): LoadPlan => ({
      url: target === 'direct' ? `${emulator}/v1/chat/completions` : `${gateway}/v1/chat/completions`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target === 'direct' ? 'bench' : key}` },
      body: JSON.stringify({ model: target === 'direct' ? 'gpt-4o-mini' : 'mini', messages, stream }),
      concurrency,
      durationMs: SECONDS * 1000,
      maxRequests: 2_000_000,
      stream,
    });

    process.stdout.write('warming up...\n');
    for (const target of ['direct', 'gateway'] as const) {
      await runLoad({ ...plan(target, 8, false), durationMs: 2000 });
      await runLoad({ ...plan(target, 1, true), durationMs: 1000 });
    }

    const samples: Record<string, LoadResult[]> = {};
    const cpuPerRequest: number[] = [];
    const record = (name: string, result: LoadResult) => (samples[name] ??= []).push(result);
    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`round ${round}/${ROUNDS}\n`);
      for (const target of ['direct', 'gateway'] as const) record(`${target}:c1`, await runLoad(plan(target, 1, false)));
      for (const target of ['direct', 'gateway'] as const) {
        const cpuBefore = await cpuSeconds(gatewayProcess.pid!);
        const result = await runLoad(plan(target, 64, false));
        if (target === 'gateway') cpuPerRequest.push(((await cpuSeconds(gatewayProcess.pid!)) - cpuBefore) * 1000 / result.requests);
        record(`${target}:c64`, result);
      }
      for (const target of ['direct', 'gateway'] as const) record(`${target}:stream`, await runLoad(plan(target, 1, true)));
    }

    const stat = (name: string, f: (result: LoadResult) => number) => median(samples[name].map(f));
    const p50 = (r: LoadResult) => percentile(r.latencies, 50);
    const p99 = (r: LoadResult) => percentile(r.latencies, 99);
    const rps = (r: LoadResult) => r.requests / r.seconds;
    const ttfc = (r: LoadResult) => percentile(r.firstChunk, 50);
    const errors = Object.values(samples).flat().reduce((sum, r) => sum + r.errors, 0);
    const status = await readFile(`/proc/${gatewayProcess.pid}/status`, 'utf8').catch(() => '');
    const peakRssMb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;

    const rows: Array<[string, string, string, string]> = [
      ['latency p50, concurrency 1 (ms)', stat('direct:c1', p50).toFixed(3), stat('gateway:c1', p50).toFixed(3), `+${(stat('gateway:c1', p50) - stat('direct:c1', p50)).toFixed(3)} (target ≤ 0.5)`],
      ['latency p99, concurrency 1 (ms)', stat('direct:c1', p99).toFixed(3), stat('gateway:c1', p99).toFixed(3), `+${(stat('gateway:c1', p99) - stat('direct:c1', p99)).toFixed(3)} (target ≤ 2)`],
      ['throughput, concurrency 64 (req/s)', stat('direct:c64', rps).toFixed(0), stat('gateway:c64', rps).toFixed(0), 'gateway on one core (target ≥ 2000)'],
      ['stream first chunk p50, concurrency 1 (ms)', stat('direct:stream', ttfc).toFixed(3), stat('gateway:stream', ttfc).toFixed(3), `+${(stat('gateway:stream', ttfc) - stat('direct:stream', ttfc)).toFixed(3)} (target ≤ 1)`],
      ['gateway CPU per request at concurrency 64 (ms)', '', median(cpuPerRequest).toFixed(3), 'user + system time of the gateway process'],
      ['gateway peak RSS (MB)', '', peakRssMb.toFixed(0), ''],
    ];
    const table = [
      `Benchmark (${new Date().toISOString()}, ${ROUNDS} rounds × ${SECONDS}s per measurement, medians; queue: ${process.env.REDIS_URL ? 'Redis' : 'PostgreSQL'}; errors: ${errors})`,
      '',
      '| measure | emulator direct | through gateway | added |',
      '|---|---|---|---|',
      ...rows.map((row) => `| ${row.join(' | ')} |`),
      '',
    ].join('\n');
    process.stdout.write(`\n${table}\n`);
    if (errors > 0) process.stdout.write(`WARNING: ${errors} requests failed; the figures above are not valid.\n`);
    await mkdir(path.join(ROOT, 'bench-results'), { recursive: true });
    await writeFile(path.join(ROOT, 'bench-results/latest.md'), table);
  } finally {
    for (const child of children.reverse()) child.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await database.drop();
    if (process.env.REDIS_URL) await dropRedisNamespace(process.env.REDIS_URL, benchPrefix);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
