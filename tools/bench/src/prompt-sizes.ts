// The prompt-size scenario of `npm run bench`: one request at a time, the same body sent to the
// emulator directly and through the gateway, for prompts from 1 KB to 1 MB, many short messages
// and many tools. It shows what a long prompt costs the gateway (parsing, validation, the
// context check and its tokenizer, re-serialising for the upstream) over the upstream alone.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { median, percentile, runLoad, runLoadUnstolen, type LoadPlan, type LoadResult } from './load';
import { cpuSeconds } from './services';

/** Models of the shipped catalogue the scenario sends to, by context length. */
const MODELS = {
  /** 128,000-token context: a body above 128,000 bytes is counted by the tokenizer. */
  context128k: { id: 'openai/gpt-4o-mini', upstream: 'gpt-4o-mini' },
  /** 1,050,000-token context: a 1 MB prompt fits by its bytes alone. */
  context1m: { id: 'openai/gpt-6.2-sol', upstream: 'gpt-6.2-sol' },
  /** 500,000-token context: a 1 MB prompt has more bytes than that, so it is counted. */
  context500k: { id: 'xai/grok-4.7', upstream: 'grok-4.7' },
} as const;
type ModelKey = keyof typeof MODELS;

/**
 * The bench's catalogue: the end-to-end chat catalogue plus the shipped catalogue's entries the
 * scenario uses, each with one source: the emulator, as an OpenAI upstream.
 */
export async function writeBenchCatalogue(root: string, file: string): Promise<string> {
  const base = parse(readFileSync(path.join(root, 'e2e/fixtures/chat-catalogue.yaml'), 'utf8')) as { models: Array<{ id: string }> };
  const shipped = parse(readFileSync(path.join(root, 'apps/catalogue/data/catalogue.yaml'), 'utf8')) as { models: Array<{ id: string }> };
  const upstreamOf = (id: string) => Object.values(MODELS).find((model) => model.id === id)!.upstream;
  const wanted = new Set<string>(Object.values(MODELS).map((model) => model.id));
  const added = shipped.models
    .filter((model) => wanted.has(model.id))
    .map((model) => ({ ...model, routing: { sources: [{ provider: 'openai', model: upstreamOf(model.id) }] } }));
  if (added.length !== wanted.size) throw new Error(`the shipped catalogue lacks one of ${[...wanted].join(', ')}`);
  await writeFile(file, stringify({ ...base, models: [...base.models, ...added] }, { aliasDuplicateObjects: false }));
  return file;
}

/**
 * Prose with the word frequencies of ordinary text (a few hundred words, the common ones far
 * more often), sentences, paragraphs and numbers; the same for every run (a fixed seed).
 */
export function prose(characters: number, seed = 1): string {
  const words = PROSE_WORDS;
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x7fffffff;
  const parts: string[] = [];
  let length = 0;
  let inSentence = 0;
  while (length < characters) {
    const word = words[Math.floor(words.length * random() ** 2)];
    let piece = inSentence === 0 ? word[0].toUpperCase() + word.slice(1) : word;
    inSentence++;
    if (random() < 0.02) piece += ` ${Math.floor(random() * 100_000)}`;
    if (inSentence > 6 && random() < 0.15) {
      piece += random() < 0.8 ? '.' : ',';
      if (piece.endsWith('.')) inSentence = 0;
      piece += random() < 0.05 ? '\n\n' : ' ';
    } else {
      piece += ' ';
    }
    parts.push(piece);
    length += piece.length;
  }
  return parts.join('').slice(0, characters);
}

const PROSE_WORDS = `the of and to in is that for it as with was on be by at this are from or an have not but which they one you all
were we there can their has more if will about would been other when so no what into out some time up only its two like then them
these may also than first any new very could after over most use such where through my way well much should make our those each
work made now people years used back because same even just both between under long many how get good world while own part see
too here still right case since take might go small being life old system number every three last however point few another did
again example high against different find great know found state during place end within fact often group set without year given
general order local power among form thus hand later less possible shown data model value function request response gateway
token prompt context message stream usage upstream client server limit account invoice contract clause party agreement section`.split(/\s+/);

export interface PromptCase {
  name: string;
  model: ModelKey;
  body: Record<string, unknown>;
  /** The issue's target for the added latency (ms), where there is one. */
  targetMs?: number;
}

/** The instruction after a long context: the emulator echoes the last user message, so the answer stays short. */
const QUESTION = { role: 'user', content: 'Summarize the document above in one sentence.' };

function longPrompt(name: string, characters: number, model: ModelKey, targetMs?: number): PromptCase {
  return { name, model, targetMs, body: { messages: [{ role: 'system', content: prose(characters) }, QUESTION] } };
}

/** 2,000 short turns of a conversation (about 250 KB of JSON). */
function manyMessages(model: ModelKey, targetMs?: number): PromptCase {
  const messages = Array.from({ length: 1_999 }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: prose(90, index + 1) }));
  return { name: '2,000 short messages', model, targetMs, body: { messages: [...messages, QUESTION] } };
}

/** 100 function tools of about 1.2 KB of JSON schema each. */
function manyTools(model: ModelKey): PromptCase {
  const tools = Array.from({ length: 100 }, (_, index) => ({
    type: 'function',
    function: {
      name: `lookup_record_${index}`,
      description: prose(300, index + 7),
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 6 }, (_, field) => [`field_${field}`, { type: field % 2 ? 'integer' : 'string', description: prose(80, index * 10 + field) }]),
        ),
        required: ['field_0'],
      },
    },
  }));
  return { name: '100 tools', model, body: { messages: [QUESTION], tools } };
}

const ALL_PROMPT_CASES: readonly PromptCase[] = [
  longPrompt('1 KB prompt', 1_000, 'context128k'),
  longPrompt('100 KB prompt', 100_000, 'context128k'),
  longPrompt('300 KB prompt', 300_000, 'context128k', 5),
  longPrompt('300 KB prompt', 300_000, 'context1m'),
  manyMessages('context128k', 5),
  manyMessages('context1m'),
  manyTools('context128k'),
  longPrompt('1 MB prompt', 1_000_000, 'context1m', 15),
  longPrompt('1 MB prompt', 1_000_000, 'context500k'),
];

/** The cases measured: all, or (BENCH_PROMPT_FILTER) those whose name or model id contains the filter, to profile one. */
export const PROMPT_CASES = ALL_PROMPT_CASES.filter((promptCase) => `${promptCase.name} ${MODELS[promptCase.model].id}`.includes(process.env.BENCH_PROMPT_FILTER ?? ''));

/** The catalogue id a case sends to through the gateway. */
export function promptModelId(promptCase: PromptCase): string {
  return MODELS[promptCase.model].id;
}

/** The bodies of one case for the emulator (the upstream's model name) and for the gateway (the catalogue id). */
export function promptPlans(promptCase: PromptCase, direct: { baseUrl: string }, gateway: { baseUrl: string; key: string }, durationMs: number, proxy?: { baseUrl: string }): { direct: LoadPlan; proxy: LoadPlan; gateway: LoadPlan } {
  const model = MODELS[promptCase.model];
  const plan = (baseUrl: string, key: string, modelName: string): LoadPlan => ({
    url: `${baseUrl}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: modelName, ...promptCase.body, max_tokens: 16 }),
    concurrency: 1,
    durationMs,
    maxRequests: 2_000,
    stream: false,
  });
  return {
    direct: plan(direct.baseUrl, 'bench', model.upstream),
    proxy: plan((proxy ?? direct).baseUrl, 'bench', model.upstream),
    gateway: plan(gateway.baseUrl, gateway.key, model.id),
  };
}

export interface PromptSizeRow {
  name: string;
  bodyBytes: number;
  model: string;
  contextLength: number;
  direct: number;
  proxy: number;
  gateway: number;
  /** CPU time of the gateway process (its token counting workers included) per request, in ms. */
  gatewayCpu: number;
  targetMs?: number;
  errors: number;
}

/**
 * Every case, direct, through the minimal proxy and through the gateway in turn, `rounds` times
 * after one warm-up round; the median of each round's p50.
 */
export async function measurePromptSizes(
  direct: { baseUrl: string },
  proxy: { baseUrl: string },
  gateway: { baseUrl: string; key: string; pid: number },
  contextLengths: Record<string, number>,
  { rounds, secondsPerMeasurement }: { rounds: number; secondsPerMeasurement: number },
): Promise<PromptSizeRow[]> {
  const measured = PROMPT_CASES.map(() => ({ direct: [] as LoadResult[], proxy: [] as LoadResult[], gateway: [] as LoadResult[], cpu: [] as number[] }));
  for (let round = 0; round <= rounds; round++) {
    process.stdout.write(round === 0 ? 'prompt sizes: warming up...\n' : `prompt sizes: round ${round}/${rounds}\n`);
    for (const [index, promptCase] of PROMPT_CASES.entries()) {
      const plan = promptPlans(promptCase, direct, gateway, secondsPerMeasurement * 1000, proxy);
      const alone = await runLoadUnstolen(plan.direct);
      const viaProxy = await runLoadUnstolen(plan.proxy);
      const cpuBefore = await cpuSeconds(gateway.pid);
      // Not retried for stolen time, so that the CPU time read covers exactly these requests.
      const viaGateway = await runLoad(plan.gateway);
      const cpu = ((await cpuSeconds(gateway.pid)) - cpuBefore) * 1000;
      if (round > 0) {
        measured[index].direct.push(alone);
        measured[index].proxy.push(viaProxy);
        measured[index].gateway.push(viaGateway);
        measured[index].cpu.push(cpu / viaGateway.requests);
      }
    }
  }
  const p50 = (results: LoadResult[]) => median(results.map((result) => percentile(result.latencies, 50)));
  return PROMPT_CASES.map((promptCase, index) => {
    const model = MODELS[promptCase.model];
    return {
      name: promptCase.name,
      bodyBytes: Buffer.byteLength(promptPlans(promptCase, direct, gateway, 0).gateway.body),
      model: model.id,
      contextLength: contextLengths[model.id] ?? 0,
      direct: p50(measured[index].direct),
      proxy: p50(measured[index].proxy),
      gateway: p50(measured[index].gateway),
      gatewayCpu: median(measured[index].cpu),
      targetMs: promptCase.targetMs,
      errors: [...measured[index].direct, ...measured[index].proxy, ...measured[index].gateway].reduce((sum, result) => sum + result.errors, 0),
    };
  });
}

/** The context lengths of the scenario's models, from the shipped catalogue. */
export function scenarioContextLengths(root: string): Record<string, number> {
  const shipped = parse(readFileSync(path.join(root, 'apps/catalogue/data/catalogue.yaml'), 'utf8')) as { models: Array<{ id: string; info: { contextLength?: number } }> };
  return Object.fromEntries(shipped.models.map((model) => [model.id, model.info.contextLength ?? 0]));
}

export function promptSizeTable(rows: readonly PromptSizeRow[]): string {
  const kilobytes = (bytes: number) => `${(bytes / 1000).toFixed(0)} kB`;
  return [
    '| prompt | body | model (context, tokens) | tokenizer needed | emulator direct p50 (ms) | added by minimal proxy (ms) | added by gateway (ms) | gateway CPU per request (ms) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const added = row.gateway - row.direct;
      const target = row.targetMs === undefined ? '' : ` (target ≤ ${row.targetMs})`;
      // The gateway's cheap bound: no prompt has more tokens than its body has bytes.
      const counted = row.bodyBytes + 16 > row.contextLength ? 'yes' : 'no';
      return `| ${row.name} | ${kilobytes(row.bodyBytes)} | ${row.model} (${row.contextLength.toLocaleString('en-US')}) | ${counted} | ${row.direct.toFixed(2)} | +${(row.proxy - row.direct).toFixed(2)} | +${added.toFixed(2)}${target}${row.errors ? ` — ${row.errors} errors` : ''} | ${row.gatewayCpu.toFixed(2)} |`;
    }),
    '',
  ].join('\n');
}
