// npm run bench:compare -- <other checkout> [more checkouts...]: the gateway of this checkout
// against the gateways of other checkouts (or of this one under other settings: `SETTING=value:.`) (each built: `npm run build` there), side by side
// on core 0 behind one emulator, billing and catalogue on core 1. After a warm-up the
// gateways take turns (order flipped every round, each measurement in several turns a round:
// see runTakingTurns) at concurrency 64 (CPU per request, req/s),
// at concurrency 1 (latency), streaming at concurrency 1 (first chunk) and 16 (CPU per
// stream and streams/s on instant streams, first chunk on paced ones: see
// PACED_UPSTREAM_MODEL), and the medians are printed.
// The minimal proxy (minimal-proxy.ts) and the emulator direct take their turns at the paced
// streams too, so each gateway's two ratios of `npm run bench` are printed from the same run.
// Because every gateway runs at nearly the same moment, a machine shared with other work
// shifts them alike: use this to tell whether a change helps when `npm run bench`'s
// absolute figures are too noisy to compare with an earlier run.
// BENCH_ONLY=prompts compares the prompt-size cases with a target instead (prompt-sizes.ts): each
// gateway's added p50 over the emulator direct and its CPU per request, one request at a time;
// BENCH_ONLY=paced takes the paced streams alone (the first-chunk ratio, the other columns empty);
// BENCH_ONLY=alongside sends small requests one at a time while two counted 300 KB prompts run
// on the same gateway (does a count delay everyone else?).
// BENCH_ONLY=deployments takes this checkout's gateway alone (no other checkout needed), serving a
// model with three weighted deployments and a model with one side by side, in turns (deployments.ts):
// the throughput ratio of the two, whose target is at most 5 % cost.
// Settings: BENCH_ROUNDS (6), BENCH_SECONDS per measurement (2), DATABASE_URL, REDIS_URL, BENCH_LEDGER,
// BENCH_MAX_STEAL, BENCH_STEAL_RETRIES, BENCH_PROFILE_DIR (see main.ts), BENCH_WRITE_DOCS=1 (the table
// also goes to docs/performance/compare[-<BENCH_ONLY>]-<the other gateways>[-redis].md, headed with the
// command, every gateway's commit, the date and the machine).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { addDeploymentModels, compareDeployments, writeDeploymentsProvidersFile } from './deployments';
import { median, percentile, runLoad, runLoadUnstolen, runTakingTurns, type LoadPlan } from './load';
import { PROMPT_CASES, promptModelId, promptPlans, writeBenchCatalogue } from './prompt-sizes';
import {
  chatLoadPlan,
  cpuSeconds,
  createBenchKey,
  gatewayEnvironment,
  machineDescription,
  PACED_GATEWAY_MODEL,
  PACED_UPSTREAM_MODEL,
  pacedLoadPlan,
  profilingArguments,
  ROOT,
  runBench,
  start,
  startBackends,
  waitForPort,
  waitHealthy,
  warmUp,
} from './services';
import { benchCommand, checkoutCommit, generatedTablePath, writeGeneratedTables } from './generated-tables';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
/** Each measurement of a round is taken in this many turns of every gateway (and yardstick) per round (see runTakingTurns). */
const TURNS = 4;

/** The bench's chat load against one gateway. */
type ChatPlanOf = (contender: Contender, concurrency: number, stream: boolean, seconds?: number) => LoadPlan;

interface Contender {
  name: string;
  root: string;
  /** The settings it was started with beyond the bench's own (`DIRECT_ROUTES=false:.`). */
  settings: Record<string, string>;
  url: string;
  process: ChildProcess;
  cpuPerRequest: number[];
  requestsPerSecond: number[];
  p50: number[];
  p99: number[];
  firstChunk: number[];
  streamCpu: number[];
  streamsPerSecond: number[];
  streamFirstChunk: number[];
  errors: number;
}

/**
 * `/path/to/checkout`, or `DIRECT_ROUTES=false:/path/to/checkout` for a gateway started with
 * settings of its own (`.` compares this checkout with itself under other settings).
 */
function parseContender(argument: string): { root: string; settings: Record<string, string> } {
  const match = /^((?:[A-Z_][A-Z0-9_]*=[^,:]*,?)+):(.+)$/.exec(argument);
  if (!match) return { root: path.resolve(argument), settings: {} };
  const settings = Object.fromEntries(match[1].split(',').filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]));
  return { root: path.resolve(match[2]), settings };
}

async function main(setup: { databaseUrl: string; queuePrefix: string; children: ChildProcess[] }): Promise<void> {
  const { table, contenders } = await compare(setup);
  process.stdout.write(`\n${table}\n`);
  const others = contenders.slice(1);
  const label = (contender: Contender) => (contender.root === ROOT ? '' : path.basename(contender.root)) + Object.entries(contender.settings).map(([name, value]) => `-${name}-${value}`).join('');
  const docs = await writeGeneratedTables(generatedTablePath(ROOT, ['compare', process.env.BENCH_ONLY, ...others.map(label), process.env.REDIS_URL && 'redis']), {
    title: `npm run bench:compare${process.env.BENCH_ONLY ? ` (BENCH_ONLY=${process.env.BENCH_ONLY})` : ''}`,
    command: benchCommand('bench:compare', process.argv.slice(2)),
    commits: contenders.map((contender) => `${contender.name}: ${checkoutCommit(contender.root)}`).join('; '),
    machine: machineDescription(),
    tables: table,
  });
  if (docs) process.stdout.write(`table written to ${path.relative(ROOT, docs)}\n`);
}

/** Runs the comparison BENCH_ONLY asks for and returns its markdown table, with the gateways it measured (this checkout's first). */
async function compare({ databaseUrl, queuePrefix, children }: { databaseUrl: string; queuePrefix: string; children: ChildProcess[] }): Promise<{ table: string; contenders: Contender[] }> {
  const deploymentsOnly = process.env.BENCH_ONLY === 'deployments';
  const others = process.argv.slice(2).map(parseContender);
  if (others.length === 0 && !deploymentsOnly) throw new Error('usage: npm run bench:compare -- [KEY=VALUE,...:]<other checkout, built> [...] (or BENCH_ONLY=deployments npm run bench:compare)');
  // The deployments scenario compares two models of this checkout's gateway: other checkouts take no part.
  if (deploymentsOnly && others.length > 0) process.stdout.write(`note: BENCH_ONLY=deployments measures this checkout alone; ${others.map(({ root }) => root).join(', ')} left out\n`);
  if (deploymentsOnly) others.length = 0;
  for (const { root } of others) {
    if (!existsSync(path.join(root, 'dist/apps/gateway/src/main.js'))) throw new Error(`${root} has no built gateway: run npm run build there first`);
  }
  if (existsSync('/usr/bin/taskset')) execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const folder = mkdtempSync(path.join(tmpdir(), 'igw-bench-'));
  const catalogue = await writeBenchCatalogue(ROOT, path.join(folder, 'catalogue.yaml'));
  if (deploymentsOnly) await addDeploymentModels(catalogue);
  const backends = await startBackends(databaseUrl, queuePrefix, children, catalogue);
  const deploymentsEnv = deploymentsOnly ? { PROVIDERS_FILE: await writeDeploymentsProvidersFile(path.join(folder, 'providers.yaml'), backends.emulator) } : {};
  const contenders: Contender[] = [];
  for (const [index, { root, settings }] of [{ root: ROOT, settings: {} }, ...others].entries()) {
    const port = await findFreePort();
    // A journal of its own: a checkout's default one may be in use by a gateway running from it.
    const journal = mkdtempSync(path.join(tmpdir(), 'igw-bench-journal-'));
    const gatewayProcess = start('apps/gateway/src/main.js', { ...gatewayEnvironment(backends, port), USAGE_JOURNAL_DIR: journal, ...deploymentsEnv, ...settings }, { core: 0, root, nodeArgs: profilingArguments() });
    children.push(gatewayProcess);
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(`${url}/readyz`);
    const shown = Object.entries(settings).map(([name, value]) => ` ${name}=${value}`).join('');
    const name = (index === 0 ? `this (${path.basename(ROOT)})` : path.basename(root)) + shown;
    contenders.push({ name, root, settings, url, process: gatewayProcess, cpuPerRequest: [], requestsPerSecond: [], p50: [], p99: [], firstChunk: [], streamCpu: [], streamsPerSecond: [], streamFirstChunk: [], errors: 0 });
  }
  const proxyPort = await findFreePort();
  children.push(start('tools/bench/src/minimal-proxy.js', { UPSTREAM: backends.emulator, PORT: String(proxyPort) }, { core: 0 }));
  await waitForPort(proxyPort);
  /** The added first chunk of paced streams is the gateway's over the minimal proxy's: both are measured against the emulator direct. */
  const yardsticks = { direct: { baseUrl: backends.emulator, firstChunk: [] as number[] }, proxy: { baseUrl: `http://127.0.0.1:${proxyPort}`, firstChunk: [] as number[] } };
  const key = await createBenchKey(backends.billing);
  const plan: ChatPlanOf = (contender, concurrency, stream, seconds = SECONDS) => chatLoadPlan({ baseUrl: contender.url, key, model: 'mini' }, concurrency, stream, seconds);
  if (process.env.BENCH_ONLY === 'prompts') return { table: await comparePromptSizes(contenders, backends.emulator, key), contenders };
  if (deploymentsOnly) return { table: await compareDeployments({ url: contenders[0].url, pid: contenders[0].process.pid! }, key, { rounds: ROUNDS, seconds: SECONDS, turns: TURNS }), contenders };
  if (process.env.BENCH_ONLY === 'alongside') return { table: await compareAlongsideCounts(contenders, backends.emulator, key, plan), contenders };

  async function measureChat(order: readonly Contender[]): Promise<void> {
    // Every gateway's throughputs in turns, each gateway's two of the stream ratio adjacent.
    const throughput = await runTakingTurns(
      order.flatMap((contender) => [{ ...plan(contender, 64, false), cpuOfPid: contender.process.pid! }, { ...plan(contender, 16, true), cpuOfPid: contender.process.pid! }]),
      TURNS,
    );
    for (const [index, contender] of order.entries()) {
      const [requests, streams] = [throughput[2 * index], throughput[2 * index + 1]];
      contender.cpuPerRequest.push(requests.cpuMs / requests.requests);
      contender.requestsPerSecond.push(requests.requests / requests.seconds);
      contender.streamCpu.push(streams.cpuMs / streams.requests);
      contender.streamsPerSecond.push(streams.requests / streams.seconds);
      contender.errors += requests.errors + streams.errors;
    }
    const [latencies, firstChunks] = [await runTakingTurns(order.map((contender) => plan(contender, 1, false)), TURNS), await runTakingTurns(order.map((contender) => plan(contender, 1, true)), TURNS)];
    for (const [index, contender] of order.entries()) {
      contender.p50.push(percentile(latencies[index].latencies, 50));
      contender.p99.push(percentile(latencies[index].latencies, 99));
      contender.firstChunk.push(percentile(firstChunks[index].firstChunk, 50));
      contender.errors += latencies[index].errors + firstChunks[index].errors;
    }
  }

  const pacedOnly = process.env.BENCH_ONLY === 'paced';
  process.stdout.write('warming up...\n');
  for (const contender of contenders) await warmUp((concurrency, stream, seconds) => runLoad(plan(contender, concurrency, stream, seconds)));
  for (let round = 1; round <= ROUNDS; round++) {
    process.stdout.write(`round ${round}/${ROUNDS}\n`);
    const order = round % 2 === 0 ? [...contenders].reverse() : contenders;
    if (!pacedOnly) await measureChat(order);
    // In turns with the yardsticks, so the first chunks compared were measured at the same moments.
    const pacedPlans = [
      ...order.map((contender) => pacedLoadPlan({ baseUrl: contender.url, key, model: PACED_GATEWAY_MODEL }, 16, SECONDS)),
      ...Object.values(yardsticks).map((yardstick) => pacedLoadPlan({ baseUrl: yardstick.baseUrl, key: 'bench', model: PACED_UPSTREAM_MODEL }, 16, SECONDS)),
    ];
    const paced = await runTakingTurns(pacedPlans, TURNS);
    for (const [index, contender] of order.entries()) {
      contender.streamFirstChunk.push(percentile(paced[index].firstChunk, 50));
      contender.errors += paced[index].errors;
    }
    for (const [index, yardstick] of Object.values(yardsticks).entries()) yardstick.firstChunk.push(percentile(paced[order.length + index].firstChunk, 50));
  }
  const direct = median(yardsticks.direct.firstChunk);
  const proxyAdds = median(yardsticks.proxy.firstChunk) - direct;
  const table = [
    `Gateways side by side (${new Date().toISOString()}, ${ROUNDS} rounds × ${SECONDS}s, medians (min–max); ${machineDescription()})`,
    '',
    '| gateway | CPU per request, c=64 (ms) | req/s, c=64 | p50, c=1 (ms) | p99, c=1 (ms) | first chunk p50 (ms) | CPU per stream, c=16 (ms) | streams/s, c=16 | paced first chunk p50, c=16 (ms) | streams/s c=16 ÷ req/s c=64 (≥ 0.8) | added paced first chunk ÷ proxy\'s (≤ 2) | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...contenders.map((contender) => {
      // Columns BENCH_ONLY=paced does not measure read `–`.
      const figure = (value: number, digits: number) => (Number.isNaN(value) ? '–' : value.toFixed(digits));
      const spread = (values: number[], digits: number) => (values.length === 0 ? '–' : `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`);
      const streamRatio = median(contender.streamsPerSecond) / median(contender.requestsPerSecond);
      const firstChunkRatio = (median(contender.streamFirstChunk) - direct) / proxyAdds;
      return `| ${contender.name} | ${spread(contender.cpuPerRequest, 3)} | ${spread(contender.requestsPerSecond, 0)} | ${figure(median(contender.p50), 2)} | ${figure(median(contender.p99), 2)} | ${figure(median(contender.firstChunk), 2)} | ${spread(contender.streamCpu, 3)} | ${spread(contender.streamsPerSecond, 0)} | ${median(contender.streamFirstChunk).toFixed(2)} | ${figure(streamRatio, 2)} | ${firstChunkRatio.toFixed(2)} | ${contender.errors} |`;
    }),
    '',
    `Paced first chunk p50 at concurrency 16: emulator direct ${direct.toFixed(2)} ms, minimal proxy ${median(yardsticks.proxy.firstChunk).toFixed(2)} ms (adds ${proxyAdds.toFixed(2)} ms).`,
    '',
  ].join('\n');
  return { table, contenders };
}

/** Long prompts counted at once on one gateway, at most: the gateway's core is shared by its event loop and its counting workers. */
const COUNTED_ALONGSIDE = 2;

/**
 * Small chat requests, one at a time, while COUNTED_ALONGSIDE clients send 300 KB prompts that
 * must be counted against gpt-4o-mini's context, each gateway in turn after a warm-up: where the
 * counting workers share the event loop's core, a count must not hold back everyone else.
 */
async function compareAlongsideCounts(contenders: readonly Contender[], emulator: string, key: string, plan: ChatPlanOf): Promise<string> {
  const countedModel = 'openai/gpt-4o-mini';
  const counted = PROMPT_CASES.find((promptCase) => promptCase.name.startsWith('300 KB') && promptModelId(promptCase) === countedModel);
  if (!counted) throw new Error('the bench has no counted 300 KB case (BENCH_PROMPT_FILTER left it out?)');
  const measured = contenders.map(() => ({ p50: [] as number[], p99: [] as number[], countedP50: [] as number[], errors: 0 }));
  const run = async (contender: Contender, seconds: number) => {
    const prompts = { ...promptPlans(counted, { baseUrl: emulator }, { baseUrl: contender.url, key }, seconds * 1000).gateway, concurrency: COUNTED_ALONGSIDE };
    return Promise.all([runLoad(plan(contender, 1, false, seconds)), runLoad(prompts)]);
  };
  process.stdout.write('warming up...\n');
  for (const contender of contenders) {
    await warmUp((concurrency, stream, seconds) => runLoad(plan(contender, concurrency, stream, seconds)));
    await run(contender, 3);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    process.stdout.write(`round ${round}/${ROUNDS}\n`);
    for (const contender of round % 2 === 0 ? [...contenders].reverse() : contenders) {
      const [small, prompts] = await run(contender, SECONDS);
      const figures = measured[contenders.indexOf(contender)];
      figures.p50.push(percentile(small.latencies, 50));
      figures.p99.push(percentile(small.latencies, 99));
      figures.countedP50.push(percentile(prompts.latencies, 50));
      figures.errors += small.errors + prompts.errors;
    }
  }
  return [
    `Small requests beside counted prompts (${new Date().toISOString()}, ${ROUNDS} rounds × ${SECONDS}s, medians; ${machineDescription()})`,
    '',
    `| gateway | small request p50 (ms) | small request p99 (ms) | ${counted.name} to ${countedModel}, ${COUNTED_ALONGSIDE} at a time: p50 (ms) | errors |`,
    '|---|---|---|---|---|',
    ...contenders.map((contender, index) => {
      const figures = measured[index];
      return `| ${contender.name} | ${median(figures.p50).toFixed(2)} | ${median(figures.p99).toFixed(2)} | ${median(figures.countedP50).toFixed(2)} | ${figures.errors} |`;
    }),
    '',
  ].join('\n');
}

/** The prompt-size cases with a target, each gateway in turn (order flipped every round) after one warm-up round. */
async function comparePromptSizes(contenders: readonly Contender[], emulator: string, key: string): Promise<string> {
  const cases = PROMPT_CASES.filter((promptCase) => promptCase.targetMs !== undefined);
  const direct = cases.map(() => [] as number[]);
  const added = cases.map(() => contenders.map(() => [] as number[]));
  const cpu = cases.map(() => contenders.map(() => [] as number[]));
  for (let round = 0; round <= ROUNDS; round++) {
    process.stdout.write(round === 0 ? 'warming up...\n' : `round ${round}/${ROUNDS}\n`);
    const order = round % 2 === 0 ? [...contenders].reverse() : contenders;
    for (const [index, promptCase] of cases.entries()) {
      const alone = await runLoadUnstolen(promptPlans(promptCase, { baseUrl: emulator }, { baseUrl: emulator, key }, SECONDS * 1000).direct);
      for (const contender of order) {
        const plan = promptPlans(promptCase, { baseUrl: emulator }, { baseUrl: contender.url, key }, SECONDS * 1000).gateway;
        const before = await cpuSeconds(contender.process.pid!);
        const result = await runLoad(plan);
        const position = contenders.indexOf(contender);
        contender.errors += result.errors;
        if (round === 0) continue;
        cpu[index][position].push((((await cpuSeconds(contender.process.pid!)) - before) * 1000) / result.requests);
        added[index][position].push(percentile(result.latencies, 50) - percentile(alone.latencies, 50));
      }
      if (round > 0) direct[index].push(percentile(alone.latencies, 50));
    }
  }
  return [
    `Prompt sizes side by side (${new Date().toISOString()}, ${ROUNDS} rounds × ${SECONDS}s, one request at a time, medians; ${machineDescription()})`,
    '',
    `| prompt | model | emulator direct p50 (ms) | ${contenders.map((contender) => `${contender.name}: added p50 (ms) / CPU per request (ms)`).join(' | ')} |`,
    `|---|---|---|${contenders.map(() => '---|').join('')}`,
    ...cases.map((promptCase, index) => {
      const cells = contenders.map((_, position) => `+${median(added[index][position]).toFixed(2)} / ${median(cpu[index][position]).toFixed(2)}`);
      return `| ${promptCase.name} (target ≤ ${promptCase.targetMs}) | ${promptModelId(promptCase)} | ${median(direct[index]).toFixed(2)} | ${cells.join(' | ')} |`;
    }),
    '',
    `errors: ${contenders.map((contender) => `${contender.name} ${contender.errors}`).join(', ')}`,
    '',
  ].join('\n');
}

runBench(main);
