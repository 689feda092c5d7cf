import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { eventually } from '@igw/testing';
import { startEmulatedDeployments, MINUTE_MS, type DeploymentRequest, type EmulatedDeployments } from './support/emulated-deployments';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';
import { expectErrorBody, type JsonResponse } from './support/http';
import type { ServiceProcess } from './support/service-process';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const ADMIN_TOKEN = 'deployments-admin-token-0123456789';
/** dep-a's key, which the providers file names as `${DEP_A_KEY}`: it must reach dep-a and never a log. */
const DEP_A_KEY = 'dep-a-key-4f1c9e0b7d2a';
const WEIGHTS = { 'dep-a': 3, 'dep-b': 2, 'dep-c': 1 } as const;
type Connection = keyof typeof WEIGHTS;
const CONNECTIONS = Object.keys(WEIGHTS) as Connection[];
/** What `x-gateway-deployment` names: `<connection>/<upstream model>`, the catalogue calling gpt-4o-mini on each. */
const deploymentOf = (connection: string) => `${connection}/gpt-4o-mini`;
/** The header every connection of a providers file version sends, so that a request tells which version the replica that sent it held. */
const VERSION_HEADER = 'x-file-version';
/** Small and fixed: a request's worst case (its prompt and max_tokens) is known, and the emulator's answer (12 tokens) too. */
const MAX_TOKENS = 5;

/** One answer of the gateway to a chat request. */
interface Answer {
  replica: number;
  model: string;
  status: number;
  /** `x-gateway-deployment`. */
  deployment: string | null;
  retryAfter: string | null;
  sentAt: number;
  response: JsonResponse;
}

interface ConnectionSettings {
  baseUrl?: string;
  rpm?: number;
  tpm?: number;
  /** Replaces the connection's entry with these fields as they are (a broken edit). */
  raw?: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fails naming what was measured, its value and the bounds (inclusive) it missed. */
function expectBetween(value: number | undefined, low: number, high: number, what: string): void {
  const within = value !== undefined && value >= low && value <= high;
  expect({ [what]: value, low, high, within }).toEqual({ [what]: value, low, high, within: true });
}

/**
 * Issue 40's measured proof: three emulated OpenAI-format deployments (dep-a, dep-b, dep-c of
 * one PROVIDERS_FILE, and a spare server a connection can be moved to) behind the gateway.
 * With REDIS_URL, two gateway replicas (separate processes, as the chart runs them) share each
 * deployment's state in Redis, and every bound below holds across both; without it, the
 * standalone gateway keeps that state in its process, and the same bounds hold for its one replica.
 */
describe('deployments of a model: weights, cooldowns and quotas on every replica, moved by editing the providers file', () => {
  const distributed = Boolean(process.env.REDIS_URL);
  let upstreams: EmulatedDeployments;
  let distributedHarness: DistributedHarness | undefined;
  let standaloneHarness: StandaloneHarness | undefined;
  let replicas: string[];
  let processes: ServiceProcess[];
  let key: string;
  let folder: string;
  let providersFile: string;
  let version = 0;

  beforeAll(async () => {
    upstreams = await startEmulatedDeployments([...CONNECTIONS, 'spare'], { 'dep-a': DEP_A_KEY });
    folder = await mkdtemp(path.join(tmpdir(), 'igw-deployments-'));
    providersFile = path.join(folder, 'providers.yaml');
    await writeProviders(providersVersion());
    const gatewayEnv = {
      PROVIDERS_FILE: providersFile,
      DEP_A_KEY,
      // The key's own limits stay out of the way: the deployments' quotas are what is measured.
      RATE_LIMIT_RPM: '1000000000',
      RATE_LIMIT_CONCURRENCY: '100000',
    };
    const catalogueFile = path.join(__dirname, 'fixtures/balanced-deployments-catalogue.yaml');
    if (distributed) {
      distributedHarness = await startDistributedHarness({ adminToken: ADMIN_TOKEN, catalogueFile, gateways: 2, gatewayEnv });
      replicas = distributedHarness.gateways;
      processes = replicas.map((_, index) => distributedHarness!.process(`gateway-${index}`));
      key = await distributedHarness.paidKey(1_000_000);
    } else {
      standaloneHarness = await startStandaloneHarness({ ...gatewayEnv, CATALOGUE_FILE: catalogueFile });
      replicas = [standaloneHarness.gateway];
      processes = [standaloneHarness.process];
      ({ key } = await standaloneHarness.paidKey(1_000_000));
    }
  }, 180_000);

  afterAll(async () => {
    await distributedHarness?.stop();
    await standaloneHarness?.stop();
    await upstreams?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** The providers file's connections: dep-a (keyed by a variable), dep-b and dep-c (keyless), each changed by `changes`; `null` leaves one out. */
  function providersVersion(changes: Partial<Record<Connection, ConnectionSettings | null>> = {}): { version: number; text: string } {
    const next = ++version;
    const connections = CONNECTIONS.filter((name) => changes[name] !== null).map((name) => {
      const settings = changes[name] ?? {};
      const entry: Record<string, unknown> = {
        name,
        kind: 'openai',
        baseUrl: settings.baseUrl ?? upstreams.byName[name].baseUrl,
        ...(name === 'dep-a' ? { apiKey: '${DEP_A_KEY}' } : { keyless: true }),
        headers: { [VERSION_HEADER]: `v${next}` },
        ...(settings.rpm === undefined ? {} : { rpm: settings.rpm }),
        ...(settings.tpm === undefined ? {} : { tpm: settings.tpm }),
      };
      return { ...entry, ...settings.raw };
    });
    return { version: next, text: stringify({ connections }) };
  }

  /** Replaces the file in one step, as a ConfigMap's update or an editor's save-by-rename does; answers when. */
  async function writeProviders(file: { text: string }): Promise<number> {
    const staged = `${providersFile}.${version}.tmp`;
    await writeFile(staged, file.text);
    await rename(staged, providersFile);
    return Date.now();
  }

  async function chat(replica: number, model: string, extra: Record<string, unknown> = {}): Promise<Answer> {
    const sentAt = Date.now();
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${replicas[replica]}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: MAX_TOKENS, ...extra }),
      });
      text = await response.text();
    } catch (error) {
      // Kept as an answer (status 0), so that a load reports every failure with the others.
      const reason = error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error);
      return { replica, model, status: 0, deployment: null, retryAfter: null, sentAt, response: { status: 0, headers: new Headers(), body: reason } };
    }
    const body: unknown = text.startsWith('{') ? JSON.parse(text) : text;
    return {
      replica,
      model,
      status: response.status,
      deployment: response.headers.get('x-gateway-deployment'),
      retryAfter: response.headers.get('retry-after'),
      sentAt,
      response: { status: response.status, headers: response.headers, body },
    };
  }

  /**
   * Chat requests for `model` from `perReplica` clients on every replica at once, each sending
   * its next request when its last one is answered, until `requests` were sent or `forMs` passed.
   */
  async function load(model: string, options: { perReplica: number; requests?: number; forMs?: number }): Promise<Answer[]> {
    const answers: Answer[] = [];
    const until = options.forMs === undefined ? Infinity : Date.now() + options.forMs;
    let sent = 0;
    const client = async (_: unknown, index: number) => {
      while (Date.now() < until && sent < (options.requests ?? Infinity)) {
        sent++;
        answers.push(await chat(index % replicas.length, model));
      }
    };
    await Promise.all(Array.from({ length: options.perReplica * replicas.length }, client));
    return answers;
  }

  /**
   * What one request to `replica` reached: the deployments' records of it (none when the gateway
   * answered itself). Only while no other request is on its way: records name no replica.
   */
  async function reached(replica: number, model: string): Promise<{ answer: Answer; records: DeploymentRequest[] }> {
    const before = upstreams.lastSeq();
    const answer = await chat(replica, model);
    return { answer, records: upstreams.since(before) };
  }

  /**
   * Sends `model` one request at a time to each replica in turn until what one reached passes
   * `check` on every replica; answers how long after `since` each passed.
   */
  async function untilEveryReplica(model: string, since: number, check: (records: DeploymentRequest[]) => boolean, timeoutMs = 10_000): Promise<number[]> {
    const passed: Array<number | undefined> = replicas.map(() => undefined);
    while (passed.includes(undefined)) {
      if (Date.now() - since > timeoutMs) throw new Error(`replicas ${passed.flatMap((at, replica) => (at === undefined ? [replica] : [])).join(', ')} did not pass within ${timeoutMs} ms`);
      for (const [replica] of replicas.entries()) {
        if (passed[replica] === undefined && check((await reached(replica, model)).records)) passed[replica] = Date.now() - since;
      }
      await sleep(100);
    }
    return passed as number[];
  }

  /** Writes a providers file version and waits until every replica sends with it; answers how long each took. */
  async function applyProviders(file: { version: number; text: string }): Promise<number[]> {
    const written = await writeProviders(file);
    return untilEveryReplica('balanced', written, (records) => records.some((record) => record.headers[VERSION_HEADER] === `v${file.version}`));
  }

  const countBy = <T>(items: readonly T[], keyOf: (item: T) => string | null): Record<string, number> => {
    const counts: Record<string, number> = {};
    for (const item of items) {
      const name = String(keyOf(item));
      counts[name] = (counts[name] ?? 0) + 1;
    }
    return counts;
  };
  const failures = (answers: readonly Answer[]) => answers.filter((answer) => answer.status !== 200).map((answer) => ({ status: answer.status, body: answer.response.body }));

  // First: no other test's traffic has reached the deployments in the minute it measures.
  it('keeps an rpm: 60 and a tpm: 1200 deployment within their quotas in a wall-clock minute across replicas, the rest going to siblings, and answers 429 with retry-after when a model has no other', async () => {
    const [RPM, TPM] = [60, 1_200];
    const quotas = providersVersion({ 'dep-b': { tpm: TPM }, 'dep-c': { rpm: RPM } });
    await applyProviders(quotas);
    // What the replicas sent under the quotas.
    const underQuotas = (record: DeploymentRequest) => record.headers[VERSION_HEADER] === `v${quotas.version}`;
    const minuteOf = (at: number) => at - (at % MINUTE_MS);
    // The requests of a minute sent before the quotas: the edit's probes (more if another test ran just before).
    const before = (name: string, minute: number) => upstreams.byName[name].received.filter((record) => !underQuotas(record) && minuteOf(record.at) === minute).length;
    // The load runs inside one wall-clock minute, long enough to spend both quotas, with most of them left.
    const left = MINUTE_MS - (Date.now() % MINUTE_MS);
    const now = minuteOf(Date.now());
    if (left < 25_000 || before('dep-c', now) > RPM / 4 || before('dep-b', now) * 12 > TPM / 4) await sleep(left + 50);
    const minute = minuteOf(Date.now());
    // dep-c's share of 480 by weight is 80 requests, dep-b's 160 (1,920 tokens): both run out.
    const answers = await load('balanced', { perReplica: 4, requests: 480 });
    expect(failures(answers)).toEqual([]);
    const alone = await Promise.all(replicas.flatMap((_, replica) => [chat(replica, 'only-c'), chat(replica, 'only-b')]));
    expect({ sameMinute: Date.now() - minute < MINUTE_MS }).toEqual({ sameMinute: true });
    for (const answer of alone) {
      expectErrorBody(answer.response, 429, '/v1/chat/completions');
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expectBetween(Number(answer.retryAfter), 1, 60, `retry-after of ${answer.model} on replica ${answer.replica}`);
    }
    for (const [start, count] of upstreams.byName['dep-c'].perMinute(underQuotas)) expectBetween(count.requests, 0, RPM, `requests dep-c received in the minute from ${new Date(start).toISOString()}`);
    for (const [start, count] of upstreams.byName['dep-b'].perMinute(underQuotas)) expectBetween(count.tokens, 0, TPM, `tokens dep-b served in the minute from ${new Date(start).toISOString()}`);
    // Each ran out of its own quota, not of something else: it served (nearly) all of it.
    const thisMinute = (name: string) => upstreams.byName[name].perMinute(underQuotas).get(minute) ?? { requests: 0, tokens: 0 };
    // Those sent before the quotas came count against them or not (they were sent when there was none).
    expectBetween(thisMinute('dep-c').requests + before('dep-c', minute), RPM - 2, RPM + before('dep-c', minute), 'requests dep-c received in the minute of the load');
    // Within a request's reservation (its worst case, 100-odd tokens) times the clients in flight.
    expectBetween(thisMinute('dep-b').tokens, TPM / 2, TPM, 'tokens dep-b served under its quota in the minute of the load');
    expect(answers.filter((answer) => answer.deployment === deploymentOf('dep-a')).length).toBeGreaterThan((480 * 3) / 6);
    await applyProviders(providersVersion());
  }, 120_000);

  it('names the deployment that served every answer, streamed or not, and sends dep-a its key from the environment', async () => {
    for (const [replica] of replicas.entries()) {
      for (const connection of CONNECTIONS) {
        const { answer, records } = await reached(replica, `only-${connection.slice(-1)}`);
        expect({ status: answer.status, deployment: answer.deployment }).toEqual({ status: 200, deployment: deploymentOf(connection) });
        expect(records.map((record) => [record.deployment, record.model, record.status])).toEqual([[connection, 'gpt-4o-mini', 200]]);
      }
      const streamed = await fetch(`${replicas[replica]}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'only-b', messages: [{ role: 'user', content: 'hi' }], max_tokens: MAX_TOKENS, stream: true }),
      });
      expect(streamed.status).toBe(200);
      expect(streamed.headers.get('x-gateway-deployment')).toBe(deploymentOf('dep-b'));
      expect(await streamed.text()).toMatch(/data: \[DONE\]\n\n$/);
    }
    // dep-a refuses a request without its key (401): every answer of dep-a above was authorized.
    expect(upstreams.byName['dep-a'].received.every((record) => record.headers.authorization === `Bearer ${DEP_A_KEY}`)).toBe(true);
  });

  it('shares 3,000 requests over both replicas 3:2:1 by weight, within 5 % for each deployment', async () => {
    const before = upstreams.lastSeq();
    const answers = await load('balanced', { perReplica: 8, requests: 3_000 });
    expect(failures(answers)).toEqual([]);
    const received = countBy(upstreams.since(before), (record) => record.deployment);
    for (const connection of CONNECTIONS) {
      const expected = (3_000 * WEIGHTS[connection]) / 6;
      expectBetween(received[connection], expected * 0.95, expected * 1.05, `requests ${connection} received`);
    }
    // Each answer names the deployment that received it; per replica the shares are smooth weighted round robin's.
    expect(countBy(answers, (answer) => answer.deployment)).toEqual(Object.fromEntries(CONNECTIONS.map((connection) => [deploymentOf(connection), received[connection]])));
    for (const [replica] of replicas.entries()) {
      const own = answers.filter((answer) => answer.replica === replica);
      const served = countBy(own, (answer) => answer.deployment);
      for (const connection of CONNECTIONS) {
        const expected = (own.length * WEIGHTS[connection]) / 6;
        expectBetween(served[deploymentOf(connection)], expected * 0.95, expected * 1.05, `answers of replica ${replica} from ${connection}`);
      }
    }
  }, 120_000);

  it('sends a deployment that answered 429 with Retry-After: 5 nothing from either replica for 5 s, then serves from it again', async () => {
    const depB = upstreams.byName['dep-b'];
    const before = upstreams.lastSeq();
    const running = load('balanced', { perReplica: 2, forMs: 8_500 });
    await sleep(500);
    // Every request arriving within a second is refused: only a replica that went on sending to it would meet a second refusal.
    depB.rateLimit(5, 1_000);
    const answers = await running;
    // The refused requests moved on to a sibling: no client saw the 429.
    expect(failures(answers)).toEqual([]);
    const atB = depB.received.filter((record) => record.seq > before);
    const refused = atB.filter((record) => record.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    const [first, last] = [refused[0].at, refused.at(-1)!.at];
    // More than one only when requests were already on their way to it when the first 429 came.
    expect(last - first).toBeLessThanOrEqual(300);
    const after = atB.slice(atB.indexOf(refused.at(-1)!) + 1);
    expect(after.length).toBeGreaterThan(0);
    expectBetween(after[0].at - first, 5_000 - 300, 5_000 + 300 + (last - first), 'ms from the first 429 to the next request');
    // Served again, at its share of the traffic: every request after the quiet answered 200.
    expect(after.every((record) => record.status === 200)).toBe(true);
    const afterwards = answers.filter((answer) => answer.sentAt > after[0].at);
    const shareOfB = afterwards.filter((answer) => answer.deployment === deploymentOf('dep-b')).length / afterwards.length;
    expect(shareOfB).toBeGreaterThan(0.2);
  }, 60_000);

  describe('editing the providers file', () => {
    it("moves a connection's traffic to its new baseUrl on every replica within 5 s, without a restart", async () => {
      await applyProviders(providersVersion());
      const pids = processes.map((service) => service.child.pid);
      const written = await writeProviders(providersVersion({ 'dep-c': { baseUrl: upstreams.byName.spare.baseUrl } }));
      const moved = await untilEveryReplica('only-c', written, (records) => records.some((record) => record.deployment === 'spare'));
      expect(Math.max(...moved)).toBeLessThanOrEqual(5_000);
      // Moved at once and for good: every later request goes to the new address, under the same deployment name.
      for (const [replica] of replicas.entries()) {
        for (let i = 0; i < 10; i++) {
          const { answer, records } = await reached(replica, 'only-c');
          expect({ deployment: answer.deployment, reached: records.map((record) => record.deployment) }).toEqual({ deployment: deploymentOf('dep-c'), reached: ['spare'] });
        }
      }
      expect(processes.map((service) => service.child.pid)).toEqual(pids);
      expect(processes.every((service) => service.child.exitCode === null)).toBe(true);
    }, 60_000);

    it('stops sending to a removed connection within 5 s, the others taking its share', async () => {
      await applyProviders(providersVersion());
      const before = upstreams.lastSeq();
      const written = await writeProviders(providersVersion({ 'dep-b': null }));
      const answers = await load('balanced', { perReplica: 2, forMs: 6_500 });
      expect(failures(answers)).toEqual([]);
      const atB = upstreams.byName['dep-b'].received.filter((record) => record.seq > before);
      expectBetween((atB.at(-1)?.at ?? written) - written, 0, 5_000, 'ms from the edit to the last request dep-b received');
      const late = answers.filter((answer) => answer.sentAt > written + 5_000);
      expect(late.length).toBeGreaterThan(0);
      expect(Object.keys(countBy(late, (answer) => answer.deployment)).sort()).toEqual([deploymentOf('dep-a'), deploymentOf('dep-c')]);
    }, 60_000);

    it('moves nothing on a broken edit (invalid YAML, a bad field, a literal secret), logs why without the secret, and takes the next valid one', async () => {
      const good = providersVersion();
      await applyProviders(good);
      const literalSecret = 'sk-literal-secret-3e8d1a6b9c0f';
      const broken: Array<{ text: string; logged: RegExp[] }> = [
        { text: 'connections:\n  - name: dep-a\n    kind: [openai\n', logged: [] },
        // Each would remove dep-b if it were taken, even in part.
        { text: providersVersion({ 'dep-b': null, 'dep-c': { raw: { baseUrl: 'not a url' } } }).text, logged: [/connections\[1\] \(dep-c\)/, /baseUrl/] },
        { text: providersVersion({ 'dep-b': null, 'dep-a': { raw: { apiKey: literalSecret } } }).text, logged: [/connections\[0\] \(dep-a\)/, /apiKey/] },
      ];
      for (const edit of broken) {
        const logLengths = processes.map((service) => service.output().length);
        const before = upstreams.lastSeq();
        await writeProviders(edit);
        // Every replica says why it kept the last good set, naming the file (and the entry and field).
        await Promise.all(
          processes.map((service, index) =>
            eventually(async () => {
              const since = service.output().slice(logLengths[index]);
              return since.includes(providersFile) && edit.logged.every((pattern) => pattern.test(since));
            }, 5_000),
          ),
        );
        const answers = await load('balanced', { perReplica: 2, forMs: 1_500 });
        expect(failures(answers)).toEqual([]);
        const records = upstreams.since(before);
        expect(new Set(records.map((record) => record.headers[VERSION_HEADER]))).toEqual(new Set([`v${good.version}`]));
        expect(Object.keys(countBy(answers, (answer) => answer.deployment)).sort()).toEqual(CONNECTIONS.map(deploymentOf));
      }
      for (const service of processes) {
        expect(service.output()).not.toContain(literalSecret);
        expect(service.output()).not.toContain(DEP_A_KEY);
      }
      const taken = await applyProviders(providersVersion());
      expect(Math.max(...taken)).toBeLessThanOrEqual(5_000);
    }, 90_000);
  });

});
