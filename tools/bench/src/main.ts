// npm run bench: the gateway against the emulator versus the emulator directly, with the
// same load generator in one run. The gateway process is pinned to core 0; the load
// generator, the emulator and the other services share core 1. A minimal Node.js proxy
// (minimal-proxy.ts), pinned like the gateway, is measured too: what it adds is what any
// Node.js gateway would add on this machine. After a warm-up the targets alternate for
// several rounds and the medians are reported; within a round, the measurements of a kind
// (latency at concurrency 1, throughput, paced streams) take turns of half a second
// (runTakingTurns). Streams (20 content chunks and the usage chunk) are measured at concurrency 1 and 16: their throughput on instant streams (CPU-bound),
// their first chunk at concurrency 16 on streams paced as a model generates them (see
// PACED_UPSTREAM_MODEL). The gateway's Responses and Messages APIs stream the same answer at
// concurrency 1, in turns with chat's streams: the gateway translates them to the upstream's
// chat call, so what each adds is measured against the emulator's chat stream. The ratios at
// the end compare figures of the same run, so the machine's speed cancels out.
// Settings: BENCH_ROUNDS (3), BENCH_SECONDS per measurement (3), DATABASE_URL (else an
// embedded PostgreSQL, pinned to core 1), REDIS_URL (else BullMQ on PostgreSQL), BENCH_LEDGER=1
// (billing applies the usage during the run too; see services.ts), BENCH_MAX_STEAL and
// BENCH_STEAL_RETRIES (latency measurements the hypervisor stole CPU time from are repeated;
// see load.ts), BENCH_ONLY (`chat` or `prompts`: one of the two tables; `streams`: the
// streams at concurrency 1 alone, see streamsTable), BENCH_PROMPT_SECONDS
// per prompt-size measurement (1; see prompt-sizes.ts), BENCH_WRITE_DOCS=1 (the tables also go to
// docs/performance/bench[-<BENCH_ONLY>][-redis].md, headed with the command, commit, date and machine).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { median, percentile, runLoad, runTakingTurns, type LoadPlan, type LoadResult } from './load';
import { measurePromptSizes, promptSizeTable, scenarioContextLengths, writeBenchCatalogue } from './prompt-sizes';
import {
  chatLoadPlan,
  createBenchKey,
  gatewayEnvironment,
  machineDescription,
  messagesLoadPlan,
  PACED_GATEWAY_MODEL,
  PACED_UPSTREAM_MODEL,
  pacedLoadPlan,
  profilingArguments,
  responsesLoadPlan,
  ROOT,
  runBench,
  start,
  startBackends,
  waitForPort,
  waitHealthy,
  warmUp,
} from './services';
import { benchCommand, checkoutCommit, generatedTablePath, writeGeneratedTables } from './generated-tables';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGETS = ['direct', 'proxy', 'gateway'] as const;
type Target = (typeof TARGETS)[number];

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const PROMPT_SECONDS = Number(process.env.BENCH_PROMPT_SECONDS ?? 1);
const ONLY = process.env.BENCH_ONLY;
/** Streams are measured under load too: the cost of a stream shows in its throughput and first chunk there. */
const STREAM_CONCURRENCY = 16;
/** Each measurement of a round is taken in this many turns with the others of its kind (see runTakingTurns). */
const TURNS = 6;

async function main({ databaseUrl, queuePrefix, children }: { databaseUrl: string; queuePrefix: string; children: ChildProcess[] }): Promise<void> {
  if (existsSync('/usr/bin/taskset')) execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  await mkdir(path.join(ROOT, 'bench-results'), { recursive: true });
  const catalogue = await writeBenchCatalogue(ROOT, path.join(ROOT, 'bench-results/catalogue.yaml'));
  const backends = await startBackends(databaseUrl, queuePrefix, children, catalogue);
  const { emulator, billing } = backends;
  const gatewayPort = await findFreePort();
  const gatewayProcess = start('apps/gateway/src/main.js', gatewayEnvironment(backends, gatewayPort), { core: Number(process.env.BENCH_GATEWAY_CORE ?? 0), nodeArgs: profilingArguments() });
  children.push(gatewayProcess);
  const gateway = `http://127.0.0.1:${gatewayPort}`;
  await waitHealthy(`${gateway}/readyz`);
  const key = await createBenchKey(billing);
  const proxyPort = await findFreePort();
  const proxyProcess = start('tools/bench/src/minimal-proxy.js', { UPSTREAM: emulator, PORT: String(proxyPort) }, { core: Number(process.env.BENCH_GATEWAY_CORE ?? 0) });
  children.push(proxyProcess);
  const proxy = `http://127.0.0.1:${proxyPort}`;
  await waitForPort(proxyPort);

  const header = `${new Date().toISOString()}, ${machineDescription()}`;
  const tables: string[] = [];
  if (ONLY === 'streams') tables.push(await streamsTable(emulator, proxy, gateway, key, gatewayProcess.pid!));
  else if (ONLY !== 'prompts') tables.push(await chatTable(emulator, proxy, gateway, key, gatewayProcess));
  if (ONLY !== 'chat' && ONLY !== 'streams') {
    const rows = await measurePromptSizes({ baseUrl: emulator }, { baseUrl: proxy }, { baseUrl: gateway, key, pid: gatewayProcess.pid! }, scenarioContextLengths(ROOT), { rounds: ROUNDS, secondsPerMeasurement: PROMPT_SECONDS });
    const errors = rows.reduce((sum, row) => sum + row.errors, 0);
    tables.push(
      [
        `Prompt sizes (${header}; one request at a time, ${ROUNDS} rounds × ${PROMPT_SECONDS}s per measurement, median of the rounds' p50; gateway CPU: user + system time of its process, token counting workers included; errors: ${errors})`,
        '',
        promptSizeTable(rows),
      ].join('\n'),
    );
    if (errors > 0) process.stdout.write(`WARNING: ${errors} prompt-size requests failed; that table is not valid.\n`);
  }
  process.stdout.write(`\n${tables.join('\n')}\n`);
  await writeFile(path.join(ROOT, 'bench-results/latest.md'), tables.join('\n'));
  const docs = await writeGeneratedTables(generatedTablePath(ROOT, ['bench', ONLY, process.env.REDIS_URL && 'redis', process.env.DIRECT_ROUTES && `direct-routes-${process.env.DIRECT_ROUTES}`]), {
    title: `npm run bench${ONLY ? ` (BENCH_ONLY=${ONLY})` : ''}`,
    command: benchCommand('bench', []),
    commits: checkoutCommit(ROOT),
    machine: machineDescription(),
    tables: tables.join('\n'),
  });
  if (docs) process.stdout.write(`tables written to ${path.relative(ROOT, docs)}\n`);
}

/** The chat table: latency, throughput and streaming, direct, through the minimal proxy and through the gateway. */
async function chatTable(emulator: string, proxy: string, gateway: string, key: string, gatewayProcess: ChildProcess): Promise<string> {
  const targets = {
    direct: { baseUrl: emulator, key: 'bench', model: 'gpt-4o-mini' },
    proxy: { baseUrl: proxy, key: 'bench', model: 'gpt-4o-mini' },
    gateway: { baseUrl: gateway, key, model: 'mini' },
  };
  const plan = (target: Target, concurrency: number, stream: boolean) => chatLoadPlan(targets[target], concurrency, stream, SECONDS);
  const pacedModels = { direct: PACED_UPSTREAM_MODEL, proxy: PACED_UPSTREAM_MODEL, gateway: PACED_GATEWAY_MODEL };
  const pacedPlan = (target: Target) => pacedLoadPlan({ ...targets[target], model: pacedModels[target] }, STREAM_CONCURRENCY, SECONDS);
  const apiStreamPlans: Array<[string, LoadPlan]> = [
    ['gateway:responses-stream', responsesLoadPlan(targets.gateway, 1, SECONDS)],
    ['gateway:messages-stream', messagesLoadPlan(targets.gateway, 1, SECONDS)],
  ];

  process.stdout.write('warming up...\n');
  for (const target of TARGETS) await warmUp((concurrency, stream, seconds) => runLoad({ ...plan(target, concurrency, stream), durationMs: seconds * 1000 }));
  for (const [, apiStream] of apiStreamPlans) await runLoad({ ...apiStream, durationMs: 2000 });

  const samples: Record<string, LoadResult[]> = {};
  const cpuPerRequest: number[] = [];
  const cpuPerStream: number[] = [];
  const record = (name: string, result: LoadResult) => (samples[name] ??= []).push(result);
  for (let round = 1; round <= ROUNDS; round++) {
    process.stdout.write(`round ${round}/${ROUNDS}\n`);
    const takeTurns = async (name: string, planOf: (target: Target) => LoadPlan) =>
      (await runTakingTurns(TARGETS.map(planOf), TURNS)).forEach((result, index) => record(`${TARGETS[index]}:${name}`, result));
    await takeTurns('c1', (target) => plan(target, 1, false));
    // Both throughputs of the gateway's stream ratio are measured in adjacent turns.
    const throughput: Array<[string, LoadPlan]> = [
      ['direct:c64', plan('direct', 64, false)],
      ['proxy:c64', plan('proxy', 64, false)],
      ['gateway:c64', { ...plan('gateway', 64, false), cpuOfPid: gatewayProcess.pid! }],
      ['gateway:stream16', { ...plan('gateway', STREAM_CONCURRENCY, true), cpuOfPid: gatewayProcess.pid! }],
      ['proxy:stream16', plan('proxy', STREAM_CONCURRENCY, true)],
      ['direct:stream16', plan('direct', STREAM_CONCURRENCY, true)],
    ];
    (await runTakingTurns(throughput.map(([, measured]) => measured), TURNS)).forEach((result, index) => record(throughput[index][0], result));
    const cpuPer = (name: string) => samples[name].at(-1)!.cpuMs / samples[name].at(-1)!.requests;
    cpuPerRequest.push(cpuPer('gateway:c64'));
    cpuPerStream.push(cpuPer('gateway:stream16'));
    const streams: Array<[string, LoadPlan]> = [...TARGETS.map((target): [string, LoadPlan] => [`${target}:stream`, plan(target, 1, true)]), ...apiStreamPlans];
    (await runTakingTurns(streams.map(([, measured]) => measured), TURNS)).forEach((result, index) => record(streams[index][0], result));
    await takeTurns('paced16', pacedPlan);
  }

  const stat = (name: string, f: (result: LoadResult) => number) => median(samples[name].map(f));
  const p50 = (r: LoadResult) => percentile(r.latencies, 50);
  const p99 = (r: LoadResult) => percentile(r.latencies, 99);
  const rps = (r: LoadResult) => r.requests / r.seconds;
  const ttfc = (r: LoadResult) => percentile(r.firstChunk, 50);
  const errors = Object.values(samples).flat().reduce((sum, r) => sum + r.errors, 0);
  const stolen = median(Object.values(samples).flat().map((r) => r.stolenPercent));
  const status = await readFile(`/proc/${gatewayProcess.pid}/status`, 'utf8').catch(() => '');
  const peakRssMb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;

  const added = (name: string, f: (result: LoadResult) => number, target: string) => {
    const [viaProxy, viaGateway] = [stat(`proxy:${name}`, f) - stat(`direct:${name}`, f), stat(`gateway:${name}`, f) - stat(`direct:${name}`, f)];
    return [`+${viaProxy.toFixed(3)}`, `+${viaGateway.toFixed(3)} (target ${target})`];
  };
  // Against the emulator's chat stream: the upstream call the gateway makes for these APIs.
  const addedStreamFirstChunk = (name: string) => stat(`gateway:${name}`, ttfc) - stat('direct:stream', ttfc);
  const apiStreamRow = (api: string, name: string) => [
    `${api} stream first chunk p50, concurrency 1 (ms)`,
    stat('direct:stream', ttfc).toFixed(3),
    '',
    stat(`gateway:${name}`, ttfc).toFixed(3),
    '',
    `+${addedStreamFirstChunk(name).toFixed(3)} (target ≤ 1.5 × chat completions')`,
  ];
  const rows: string[][] = [
    ['latency p50, concurrency 1 (ms)', stat('direct:c1', p50).toFixed(3), stat('proxy:c1', p50).toFixed(3), stat('gateway:c1', p50).toFixed(3), ...added('c1', p50, '≤ 0.5')],
    ['latency p99, concurrency 1 (ms)', stat('direct:c1', p99).toFixed(3), stat('proxy:c1', p99).toFixed(3), stat('gateway:c1', p99).toFixed(3), ...added('c1', p99, '≤ 2')],
    ['throughput, concurrency 64 (req/s)', stat('direct:c64', rps).toFixed(0), stat('proxy:c64', rps).toFixed(0), stat('gateway:c64', rps).toFixed(0), '', 'one core (target ≥ 2000)'],
    ['stream first chunk p50, concurrency 1 (ms)', stat('direct:stream', ttfc).toFixed(3), stat('proxy:stream', ttfc).toFixed(3), stat('gateway:stream', ttfc).toFixed(3), ...added('stream', ttfc, '≤ 1')],
    apiStreamRow('Responses API (POST /v1/responses)', 'responses-stream'),
    apiStreamRow('Messages API (POST /v1/messages)', 'messages-stream'),
    ['stream throughput, concurrency 16 (req/s)', stat('direct:stream16', rps).toFixed(0), stat('proxy:stream16', rps).toFixed(0), stat('gateway:stream16', rps).toFixed(0), '', ''],
    ['paced stream first chunk p50, concurrency 16 (ms)', stat('direct:paced16', ttfc).toFixed(3), stat('proxy:paced16', ttfc).toFixed(3), stat('gateway:paced16', ttfc).toFixed(3), ...added('paced16', ttfc, '≤ 2 × the proxy\'s')],
    ['gateway CPU per request at concurrency 64 (ms)', '', '', median(cpuPerRequest).toFixed(3), '', 'user + system time of the gateway process'],
    ['gateway CPU per stream at concurrency 16 (ms)', '', '', median(cpuPerStream).toFixed(3), '', '20 content chunks and the usage chunk'],
    ['gateway peak RSS (MB)', '', '', peakRssMb.toFixed(0), '', ''],
  ];
  // Ratios of figures from the same run, so the machine's speed cancels out.
  const streamThroughputRatio = stat('gateway:stream16', rps) / stat('gateway:c64', rps);
  const addedFirstChunk = (target: Target) => stat(`${target}:paced16`, ttfc) - stat('direct:paced16', ttfc);
  const firstChunkRatio = addedFirstChunk('gateway') / addedFirstChunk('proxy');
  const ratios = [
    ['streamed req/s at concurrency 16 ÷ non-streamed req/s at concurrency 64', streamThroughputRatio.toFixed(2), '≥ 0.8'],
    ['added first chunk of paced streams at concurrency 16, gateway ÷ minimal proxy', firstChunkRatio.toFixed(2), '≤ 2'],
    ['added first chunk of streams at concurrency 1, Responses API ÷ chat completions', (addedStreamFirstChunk('responses-stream') / addedStreamFirstChunk('stream')).toFixed(2), '≤ 1.5'],
    ['added first chunk of streams at concurrency 1, Messages API ÷ chat completions', (addedStreamFirstChunk('messages-stream') / addedStreamFirstChunk('stream')).toFixed(2), '≤ 1.5'],
  ];
  const table = [
    `Benchmark (${new Date().toISOString()}, ${ROUNDS} rounds × ${SECONDS}s per measurement, medians; ${machineDescription()}; ledger ${process.env.BENCH_LEDGER === '1' ? 'applied during the run' : 'not applied (BENCH_LEDGER=1 applies it)'}; CPU time stolen by the hypervisor, median of the measurements kept: ${stolen.toFixed(1)} %; errors: ${errors})`,
    '',
    '| measure | emulator direct | minimal proxy | through gateway | added by minimal proxy | added by gateway |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    '| ratio (same run) | gateway | target |',
    '|---|---|---|',
    ...ratios.map((row) => `| ${row.join(' | ')} |`),
    '',
  ].join('\n');
  if (errors > 0) process.stdout.write(`WARNING: ${errors} requests failed; the chat figures are not valid.\n`);
  return table;
}

/**
 * BENCH_ONLY=streams: the streams at concurrency 1 alone (chat completions direct, through the
 * proxy and through the gateway, and the gateway's Responses and Messages APIs), in turns as
 * in the full table: the quick way to compare what the APIs add to a stream's first chunk.
 */
async function streamsTable(emulator: string, proxy: string, gateway: string, key: string, gatewayPid: number): Promise<string> {
  const targets = {
    direct: { baseUrl: emulator, key: 'bench', model: 'gpt-4o-mini' },
    proxy: { baseUrl: proxy, key: 'bench', model: 'gpt-4o-mini' },
    gateway: { baseUrl: gateway, key, model: 'mini' },
  };
  // The gateway's CPU time is measured too: it says what each API costs where latencies are noisy.
  const measuringCpu = (plan: LoadPlan): LoadPlan => ({ ...plan, cpuOfPid: gatewayPid });
  const streams: Array<[string, LoadPlan]> = [
    ['direct:stream', chatLoadPlan(targets.direct, 1, true, SECONDS)],
    ['proxy:stream', chatLoadPlan(targets.proxy, 1, true, SECONDS)],
    ['gateway:stream', measuringCpu(chatLoadPlan(targets.gateway, 1, true, SECONDS))],
    ['gateway:responses-stream', measuringCpu(responsesLoadPlan(targets.gateway, 1, SECONDS))],
    ['gateway:messages-stream', measuringCpu(messagesLoadPlan(targets.gateway, 1, SECONDS))],
  ];
  process.stdout.write('warming up...\n');
  for (const [, measured] of streams) await runLoad({ ...measured, durationMs: 2000 });
  const samples: Record<string, LoadResult[]> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    process.stdout.write(`round ${round}/${ROUNDS}\n`);
    (await runTakingTurns(streams.map(([, measured]) => measured), TURNS)).forEach((result, index) => (samples[streams[index][0]] ??= []).push(result));
  }
  const ttfc = (name: string) => median(samples[name].map((result) => percentile(result.firstChunk, 50)));
  const added = (name: string) => ttfc(name) - ttfc('direct:stream');
  const errors = Object.values(samples).flat().reduce((sum, result) => sum + result.errors, 0);
  const stolen = median(Object.values(samples).flat().map((result) => result.stolenPercent));
  const cpuPerStream = (name: string) => median(samples[name].map((result) => result.cpuMs / result.requests));
  const row = (measure: string, name: string, ratio = '') => `| ${measure} | ${ttfc(name).toFixed(3)} | +${added(name).toFixed(3)} | ${ratio} | ${name.startsWith('gateway:') ? cpuPerStream(name).toFixed(3) : ''} |`;
  const ratio = (name: string) => `${(added(name) / added('gateway:stream')).toFixed(2)} (target ≤ 1.5)`;
  if (errors > 0) process.stdout.write(`WARNING: ${errors} requests failed; the figures are not valid.\n`);
  return [
    `Streams at concurrency 1 (${new Date().toISOString()}, ${ROUNDS} rounds × ${SECONDS}s per measurement, medians of the rounds' p50; ${machineDescription()}; CPU time stolen by the hypervisor, median: ${stolen.toFixed(1)} %; errors: ${errors})`,
    '',
    '| stream first chunk p50 (ms) | time | added to the emulator\'s | ÷ chat completions\' added | gateway CPU per stream (ms) |',
    '|---|---|---|---|---|',
    row('emulator direct', 'direct:stream'),
    row('minimal proxy', 'proxy:stream'),
    row('gateway, chat completions', 'gateway:stream'),
    row('gateway, Responses API', 'gateway:responses-stream', ratio('gateway:responses-stream')),
    row('gateway, Messages API', 'gateway:messages-stream', ratio('gateway:messages-stream')),
    '',
  ].join('\n');
}

runBench(main);
