// The deployments scenario of `npm run bench:compare` (BENCH_ONLY=deployments): one gateway
// serving two catalogue models side by side, one with a single deployment and one shared by
// weight 3:2:1 over three (smooth weighted round robin, each deployment's state kept where the
// run keeps it: in the process, or in Redis with REDIS_URL). Every deployment is a connection of
// PROVIDERS_FILE to the same emulator, so the upstream work per request is the same for both
// models and what differs is what picking among three, and keeping three deployments' state,
// costs the gateway. The target: the three-deployment model keeps at least 95 % of the other's
// throughput at concurrency 64.
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { median, percentile, runLoad, runTakingTurns, type LoadResult } from './load';
import { chatLoadPlan, machineDescription, warmUp } from './services';

/** The PROVIDERS_FILE connections, each to the bench's emulator. */
const CONNECTIONS = [
  { name: 'dep-a', weight: 3 },
  { name: 'dep-b', weight: 2 },
  { name: 'dep-c', weight: 1 },
] as const;

export const ONE_DEPLOYMENT_MODEL = 'one-deployment';
export const THREE_DEPLOYMENTS_MODEL = 'three-deployments';

/** Adds the scenario's two models to a bench catalogue file (priced and sized as its `mini`, which the chat plans send to). */
export async function addDeploymentModels(catalogueFile: string): Promise<void> {
  const catalogue = parse(await readFile(catalogueFile, 'utf8')) as { models: Array<Record<string, unknown> & { id: string }> };
  const mini = catalogue.models.find((model) => model.id === 'test/mini');
  if (!mini) throw new Error(`${catalogueFile} has no test/mini to model the deployments scenario on`);
  const entry = (id: string, routing: Record<string, unknown>) => ({ ...mini, id: `test/${id}`, aliases: [id], tags: [], routing });
  catalogue.models.push(
    entry(ONE_DEPLOYMENT_MODEL, { sources: [{ provider: CONNECTIONS[0].name, model: 'gpt-4o-mini' }] }),
    entry(THREE_DEPLOYMENTS_MODEL, { strategy: 'weighted', sources: CONNECTIONS.map(({ name, weight }) => ({ provider: name, model: 'gpt-4o-mini', weight })) }),
  );
  await writeFile(catalogueFile, stringify(catalogue, { aliasDuplicateObjects: false }));
}

/** Writes the scenario's PROVIDERS_FILE: the three connections, keyless (the emulator takes any key), to `emulator`. */
export async function writeDeploymentsProvidersFile(file: string, emulator: string): Promise<string> {
  const connections = CONNECTIONS.map(({ name }) => ({ name, kind: 'openai', baseUrl: `${emulator}/v1`, keyless: true }));
  await writeFile(file, stringify({ connections }));
  return file;
}

export interface DeploymentsComparison {
  rounds: number;
  seconds: number;
  turns: number;
}

/**
 * The two models through one gateway, after a warm-up of each: in every round throughput at
 * concurrency 64 (req/s and the gateway's CPU per request) and latency at concurrency 1, the
 * two models taking turns (see runTakingTurns), their order flipped every round. Answers the table.
 */
export async function compareDeployments(gateway: { url: string; pid: number }, key: string, { rounds, seconds, turns }: DeploymentsComparison): Promise<string> {
  const models = [ONE_DEPLOYMENT_MODEL, THREE_DEPLOYMENTS_MODEL];
  const plan = (model: string, concurrency: number, stream: boolean, duration = seconds) => chatLoadPlan({ baseUrl: gateway.url, key, model }, concurrency, stream, duration);
  const figures = Object.fromEntries(models.map((model) => [model, { rps: [] as number[], cpu: [] as number[], p50: [] as number[], errors: 0 }]));
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  process.stdout.write('warming up...\n');
  for (const model of models) await warmUp((concurrency, stream, duration) => runLoad(plan(model, concurrency, stream, duration)));
  for (let round = 1; round <= rounds; round++) {
    process.stdout.write(`round ${round}/${rounds}\n`);
    const order = round % 2 === 0 ? [...models].reverse() : models;
    const throughput = await runTakingTurns(order.map((model) => ({ ...plan(model, 64, false), cpuOfPid: gateway.pid })), turns);
    const latency = await runTakingTurns(order.map((model) => plan(model, 1, false)), turns);
    const rps = (result: LoadResult) => result.requests / result.seconds;
    for (const [index, model] of order.entries()) {
      const measured = figures[model];
      measured.rps.push(rps(throughput[index]));
      measured.cpu.push(throughput[index].cpuMs / throughput[index].requests);
      measured.p50.push(percentile(latency[index].latencies, 50));
      measured.errors += throughput[index].errors + latency[index].errors;
    }
    ratios.push(figures[THREE_DEPLOYMENTS_MODEL].rps.at(-1)! / figures[ONE_DEPLOYMENT_MODEL].rps.at(-1)!);
    cpuRatios.push(figures[THREE_DEPLOYMENTS_MODEL].cpu.at(-1)! / figures[ONE_DEPLOYMENT_MODEL].cpu.at(-1)!);
  }
  const spread = (values: number[], digits: number) => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  const errors = models.reduce((sum, model) => sum + figures[model].errors, 0);
  if (errors > 0) process.stdout.write(`WARNING: ${errors} requests failed; the figures are not valid.\n`);
  const ratio = median(ratios);
  return [
    `A model with three weighted deployments vs a model with one, through one gateway (${new Date().toISOString()}, ${rounds} rounds × ${seconds}s, medians (min–max); ${machineDescription()}; deployment state ${process.env.REDIS_URL ? 'in Redis' : 'in the process'})`,
    '',
    '| model | req/s, c=64 | CPU per request, c=64 (ms) | p50, c=1 (ms) | errors |',
    '|---|---|---|---|---|',
    ...models.map((model) => {
      const measured = figures[model];
      const label = model === ONE_DEPLOYMENT_MODEL ? 'one deployment (dep-a)' : 'three deployments, weights 3:2:1 (dep-a, dep-b, dep-c)';
      return `| ${label} | ${spread(measured.rps, 0)} | ${spread(measured.cpu, 3)} | ${median(measured.p50).toFixed(2)} | ${measured.errors} |`;
    }),
    '',
    `Throughput ratio, three deployments ÷ one (median of the rounds' ratios): ${ratio.toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}); cost ${((1 - ratio) * 100).toFixed(1)} % (target ≤ 5 %).`,
    // The gateway's own CPU time per request bounds its throughput on its core, and other work on the machine moves it far less than req/s.
    `Gateway CPU per request, three deployments ÷ one (median of the rounds' ratios): ${median(cpuRatios).toFixed(3)} (${Math.min(...cpuRatios).toFixed(3)}–${Math.max(...cpuRatios).toFixed(3)}); the throughput it allows costs ${((1 - 1 / median(cpuRatios)) * 100).toFixed(1)} %.`,
    '',
  ].join('\n');
}
