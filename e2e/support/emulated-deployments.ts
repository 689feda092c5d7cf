import { createServer, request as httpRequest, Agent, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator, type RunningEmulator } from '../../tools/emulator/src/emulator';

/** One request a deployment received, as it saw it. */
export interface DeploymentRequest {
  /** The deployment that received it. */
  deployment: string;
  /** Arrival, in ms since the epoch (this machine's clock: the gateways' too). */
  at: number;
  /** Order of arrival over every deployment of the set: what a test sending one request at a time reads its request back by. */
  seq: number;
  /** The upstream model the body named. */
  model: string;
  /** Request header names are lower-case. */
  headers: IncomingHttpHeaders;
  /** The status it answered; 0 until it has. */
  status: number;
  /** The prompt + completion tokens its answer reported (0 for a refusal, or until it has answered). */
  tokens: number;
}

export interface MinuteCount {
  requests: number;
  tokens: number;
}

export interface EmulatedDeployment {
  name: string;
  /** The OpenAI base URL a connection names (`.../v1`). */
  baseUrl: string;
  /** Every request received, oldest first. */
  received: DeploymentRequest[];
  /**
   * Answers every request arriving within `forMs` from now with OpenAI's 429 and
   * `Retry-After: <retryAfterSeconds>`, as a deployment over its provider-side quota does.
   */
  rateLimit(retryAfterSeconds: number, forMs: number): void;
  /** Requests received (those `counted` says, or all) and tokens served per wall-clock minute, keyed by the minute's start (ms since the epoch). */
  perMinute(counted?: (request: DeploymentRequest) => boolean): Map<number, MinuteCount>;
  close(): Promise<void>;
}

export interface EmulatedDeployments {
  /** The emulator that writes every answer (its OpenAI chat completions: word-count tokens, `max_tokens` honoured). */
  emulator: RunningEmulator;
  byName: Record<string, EmulatedDeployment>;
  /** Requests received by any of them after `seq` (every one when omitted), in order of arrival. */
  since(seq?: number): DeploymentRequest[];
  /** The `seq` of the newest request any of them received (0 before any). */
  lastSeq(): number;
  close(): Promise<void>;
}

export const MINUTE_MS = 60_000;

/**
 * Upstream deployments of the OpenAI wire format, each a small server on 127.0.0.1 of its
 * own, as several Azure regions or OpenAI projects would be: it counts what it receives and
 * the tokens it serves per wall-clock minute (what a provider's rpm/tpm quota counts) and can
 * be told to answer 429 with a Retry-After. The answers themselves are the emulator's: each
 * deployment passes the request on to one shared emulator and relays its answer unchanged.
 * `apiKeys` names the deployments that require `Authorization: Bearer <key>` (401 otherwise).
 */
export async function startEmulatedDeployments(names: readonly string[], apiKeys: Record<string, string> = {}): Promise<EmulatedDeployments> {
  const emulator = await startEmulator();
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let seq = 0;
  const all: DeploymentRequest[] = [];
  const byName: Record<string, EmulatedDeployment> = {};
  try {
    for (const name of names) {
      byName[name] = await startDeployment(name, apiKeys[name], emulator.url, agent, () => ++seq, all);
    }
  } catch (error) {
    await Promise.all(Object.values(byName).map((deployment) => deployment.close()));
    await emulator.close();
    throw error;
  }
  return {
    emulator,
    byName,
    since: (after = 0) => all.filter((entry) => entry.seq > after),
    lastSeq: () => seq,
    async close() {
      await Promise.all(Object.values(byName).map((deployment) => deployment.close()));
      agent.destroy();
      await emulator.close();
    },
  };
}

async function startDeployment(
  name: string,
  apiKey: string | undefined,
  emulatorUrl: string,
  agent: Agent,
  nextSeq: () => number,
  all: DeploymentRequest[],
): Promise<EmulatedDeployment> {
  const received: DeploymentRequest[] = [];
  let refusing: { until: number; retryAfterSeconds: number } | undefined;
  const target = new URL(emulatorUrl);

  const server = createServer({ noDelay: true }, (request, response) => {
    const at = Date.now();
    void readBody(request).then(
      (body) => {
        const entry: DeploymentRequest = { deployment: name, at, seq: nextSeq(), model: modelOf(body), headers: request.headers, status: 0, tokens: 0 };
        received.push(entry);
        all.push(entry);
        if (apiKey !== undefined && request.headers.authorization !== `Bearer ${apiKey}`) {
          return answerError(response, entry, 401, { 'content-type': 'application/json' }, 'Incorrect API key provided.', 'invalid_api_key');
        }
        if (refusing && at < refusing.until) {
          const headers = { 'content-type': 'application/json', 'retry-after': String(refusing.retryAfterSeconds) };
          return answerError(response, entry, 429, headers, `Rate limit reached for ${name}. Please try again in ${refusing.retryAfterSeconds}s.`, 'rate_limit_exceeded');
        }
        relay(request, body, response, entry);
      },
      () => response.destroy(),
    );
  });

  /** Passes the request to the emulator and its answer back, whole, reading the usage it reported. */
  function relay(request: IncomingMessage, body: Buffer, response: ServerResponse, entry: DeploymentRequest): void {
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        agent,
        headers: { 'content-type': request.headers['content-type'] ?? 'application/json', 'content-length': String(body.length) },
      },
      (answer) => {
        void readBody(answer).then(
          (answerBody) => {
            entry.status = answer.statusCode ?? 0;
            entry.tokens = usageTokens(answerBody, String(answer.headers['content-type'] ?? ''));
            response.writeHead(entry.status, { 'content-type': answer.headers['content-type'] ?? 'application/json', 'content-length': String(answerBody.length) });
            response.end(answerBody);
          },
          () => response.destroy(),
        );
      },
    );
    upstream.on('error', () => response.destroy());
    upstream.end(body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    name,
    baseUrl,
    received,
    rateLimit(retryAfterSeconds, forMs) {
      refusing = { until: Date.now() + forMs, retryAfterSeconds };
    },
    perMinute(counted = () => true) {
      const minutes = new Map<number, MinuteCount>();
      for (const entry of received.filter(counted)) {
        const start = entry.at - (entry.at % MINUTE_MS);
        const count = minutes.get(start) ?? { requests: 0, tokens: 0 };
        count.requests++;
        count.tokens += entry.tokens;
        minutes.set(start, count);
      }
      return minutes;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answerError(response: ServerResponse, entry: DeploymentRequest, status: number, headers: Record<string, string>, message: string, code: string): void {
  entry.status = status;
  const type = status === 429 ? 'requests' : 'invalid_request_error';
  response.writeHead(status, headers);
  response.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

function modelOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { model?: unknown };
    return typeof parsed.model === 'string' ? parsed.model : '';
  } catch {
    return '';
  }
}

/** prompt + completion tokens of an OpenAI answer: its `usage`, or a stream's usage chunk. */
function usageTokens(body: Buffer, contentType: string): number {
  const total = (usage: unknown) => {
    const fields = usage as { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
    return (fields?.prompt_tokens ?? 0) + (fields?.completion_tokens ?? 0);
  };
  const text = body.toString('utf8');
  try {
    if (!contentType.startsWith('text/event-stream')) return total((JSON.parse(text) as { usage?: unknown }).usage);
    let tokens = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const usage = (JSON.parse(line.slice(6)) as { usage?: unknown }).usage;
      if (usage) tokens = total(usage);
    }
    return tokens;
  } catch {
    return 0;
  }
}

function readBody(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
  });
}
