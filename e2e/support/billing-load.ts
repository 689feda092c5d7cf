import { creditsToMicro } from '@igw/domain';

/** Request kinds of the mixed load, by index: streamed chat, chat, embeddings. */
export function mixedRequest(index: number): { path: string; body: Record<string, unknown>; stream: boolean } {
  const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit'.split(' ').slice(0, 1 + (index % 8)).join(' ');
  const kind = index % 5;
  if (kind === 4) return { path: '/v1/embeddings', body: { model: 'embed', input: `${index} ${words}` }, stream: false };
  const stream = kind < 2;
  return {
    path: '/v1/chat/completions',
    body: { model: 'mini', messages: [{ role: 'user', content: `${index} ${words}` }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) },
    stream,
  };
}

/** What a response says it cost, in micro-credits: `meta.usage.credits_used` (of the last data event for a stream). */
export function reportedCostMicro(text: string, stream: boolean): bigint {
  const credits = stream
    ? (JSON.parse(text.split('\n\n').filter((event) => event.startsWith('data: {')).at(-1)!.slice(6)) as { meta: { usage: { credits_used: number } } }).meta.usage.credits_used
    : (JSON.parse(text) as { meta: { usage: { credits_used: number } } }).meta.usage.credits_used;
  return creditsToMicro(String(credits));
}

export interface LoadOutcome {
  /** Sum of what the answered requests reported in `meta.usage`. */
  spentMicro: bigint;
  answered: number;
  /** Status and start of the body of every request that was not answered with 200. */
  failures: string[];
}

/**
 * `requests` paid requests of the mixed kinds, `concurrency` at a time, spread over the
 * gateways. `beforeRequest` runs as each request starts (e.g. to restart a service mid-run).
 */
export async function fireMixedLoad(options: {
  gateways: string[];
  key: string;
  requests: number;
  concurrency: number;
  beforeRequest?: (index: number) => void;
}): Promise<LoadOutcome> {
  const outcome: LoadOutcome = { spentMicro: 0n, answered: 0, failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < options.requests) {
      const index = next++;
      options.beforeRequest?.(index);
      const request = mixedRequest(index);
      const response = await fetch(`${options.gateways[index % options.gateways.length]}${request.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(request.body),
      });
      const text = await response.text();
      if (response.status !== 200) {
        outcome.failures.push(`${response.status} ${text.slice(0, 200)}`);
        continue;
      }
      outcome.spentMicro += reportedCostMicro(text, request.stream);
      outcome.answered++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcome;
}

export interface OverspendOutcome {
  admitted: number;
  spentMicro: bigint;
  /** `<status> <message>` of each kind of refusal, with how often it came. */
  refusals: Map<string, number>;
  /** The most the gateway holds for one of the requests sent: every body byte as an input token, plus max_tokens of output. */
  ceilingMicro: bigint;
}

/**
 * Bursts of concurrent chat requests over the gateways at one account until a whole burst
 * is refused: what an account with a small balance and a busy client goes through.
 * `prices` are the model's credits per input and per output token.
 */
export async function spendUntilRefused(options: {
  gateways: string[];
  key: string;
  prices: { inputCredits: number; outputCredits: number };
  burst: number;
  maxBursts: number;
}): Promise<OverspendOutcome> {
  const maxTokens = 20;
  const body = (index: number) => JSON.stringify({ model: 'mini', max_tokens: maxTokens, messages: [{ role: 'user', content: `request ${index}: tell me a long story` }] });
  const outcome: OverspendOutcome = { admitted: 0, spentMicro: 0n, refusals: new Map(), ceilingMicro: 0n };
  let sent = 0;
  for (let burst = 0; burst < options.maxBursts; burst++) {
    const answers = await Promise.all(
      Array.from({ length: options.burst }, async (_, slot) => {
        const text = body(sent++);
        const ceiling = Buffer.byteLength(text) * options.prices.inputCredits + maxTokens * options.prices.outputCredits;
        const ceilingMicro = creditsToMicro(ceiling.toFixed(6));
        if (ceilingMicro > outcome.ceilingMicro) outcome.ceilingMicro = ceilingMicro;
        const response = await fetch(`${options.gateways[slot % options.gateways.length]}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
          body: text,
        });
        return { status: response.status, text: await response.text() };
      }),
    );
    for (const answer of answers) {
      if (answer.status === 200) {
        outcome.admitted++;
        outcome.spentMicro += reportedCostMicro(answer.text, false);
      } else {
        const reason = `${answer.status} ${(JSON.parse(answer.text) as { message: string }).message}`;
        outcome.refusals.set(reason, (outcome.refusals.get(reason) ?? 0) + 1);
      }
    }
    if (answers.every((answer) => answer.status === 403)) break;
    // Let billing apply what was spent, as time passes between bursts in real use.
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return outcome;
}
