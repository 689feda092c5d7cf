import path from 'node:path';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { lunaAnswers, systemOneAnswers } from '../tools/emulator/src/openai/decisions';
import { call, expectErrorBody, type JsonResponse } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type Usage = { input_tokens: number; output_tokens: number };
type Decision = { model: string; answers: unknown; usage: Usage; meta: { usage: { credits_used: number; usd_spent: number } } };
/** Credits of input tokens at $20 per million tokens and 2,000,000 credits per USD (the output price in the fixture is never charged). */
const creditsFor = (tokens: number) => tokens * 40;
const words = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(24)]).toString('base64');
/** The probabilities the fallback must read from the fixture's `@top-logprobs` (label: logprob). */
const LOGPROBS: Record<string, number> = { A: -0.1, yes: -0.2, '1': -0.5, '2': -1, C: -1.2, no: -1.8, B: -2.3, '0': -3 };
const renormalised = (labels: string[]) => {
  const mass = labels.map((label) => (label in LOGPROBS ? Math.exp(LOGPROBS[label]) : 0));
  const total = mass.reduce((a, b) => a + b, 0);
  return mass.map((m) => m / total);
};

/**
 * POST /v1/decisions against the standalone app (gateway, billing, catalogue and the
 * decisions service over the queue), the upstreams played by the emulator.
 */
describe('decisions, end to end', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;
  let accountId: string;
  /** Every successful response, by request id, for the ledger check. */
  const answered = new Map<string, Decision>();

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/decisions-catalogue.yaml'),
      UPSTREAM_TIMEOUT_MS: '10000',
      // Longer than the model timeout of test/jev-timeout (1 s, which undici's timers may overrun by up to a second) and the queue's round trip.
      DECISIONS_TIMEOUT_MS: '4000',
      ...emulatedProviders(emulator.url),
      TYPESAFE_API_KEY: 'typesafe-key',
      TYPESAFE_BASE_URL: `${emulator.url}/v1`,
      VLLM_BASE_URL: `${emulator.url}/v1`,
    });
    ({ key, accountId } = await harness.paidKey(1_000_000));
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const url = () => `${harness.gateway}/v1/decisions`;

  async function decide(body: Record<string, unknown>): Promise<JsonResponse<Decision>> {
    const response = await call<Decision>(url(), { token: key, body });
    if (response.status === 200) answered.set(response.headers.get('x-request-id')!, response.body);
    return response;
  }

  const jevQuestions = {
    is_complaint: { type: 'noul', instructions: 'Is the customer complaining?' },
    topic: { type: 'choice', instructions: 'What is it about?', criteria: { billing: 'payments and refunds', shipping: 'delivery', other: 'anything else' } },
    urgency: { type: 'score', instructions: 'How urgent is it?', criteria: ['can wait', 'this week', 'today'] },
  };
  const state = 'I was charged twice for order 4411, please refund one today.';

  it('answers the Jev shape through System One: every question type, probabilities summing to 1, input tokens billed', async () => {
    const response = await decide({ model: 'jev-1.14', state, questions: jevQuestions });
    expect(response.status).toBe(200);
    expect(response.body.model).toBe('test/jev-1.14');
    expect(response.body.answers).toEqual(systemOneAnswers(jevQuestions));
    const answers = response.body.answers as Record<string, { probabilities?: Record<string, number> }>;
    for (const name of ['topic', 'urgency']) expect(Object.values(answers[name].probabilities!).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    const inputTokens = words(state) + words('Is the customer complaining? What is it about? payments and refunds delivery anything else How urgent is it? can wait this week today');
    expect(response.body.usage).toEqual({ input_tokens: inputTokens, output_tokens: 3 });
    expect(response.body.meta.usage.credits_used).toBe(creditsFor(inputTokens));
    const sent = emulator.requests.at(-1)!;
    expect(sent.path).toBe('/v1/systemone');
    expect(sent.headers.authorization).toBe('Bearer typesafe-key');
    expect(sent.body).toEqual({ model: 'jev-1.14', state, questions: jevQuestions });
  });

  it('answers the floating id as its current pinned release', async () => {
    const response = await decide({ model: 'test/jev', state, questions: { is_complaint: jevQuestions.is_complaint } });
    expect(response.status).toBe(200);
    expect(response.body.model).toBe('test/jev-1.14');
  });

  it('answers box only on the model version that supports it, with image assets referenced from state', async () => {
    const questions = { where: { type: 'box', instructions: 'Where is the dent?' } };
    const assets = { photo_1: { type: 'image', format: 'png', data_base64: PNG } };
    const response = await decide({ model: 'test/jev', state: 'Car door in photo_1', questions, assets });
    expect(response.status).toBe(200);
    expect(response.body.answers).toEqual({ where: { type: 'box', top: 0.1, bottom: 0.6, left: 0.2, right: 0.7, confidence: 0.9 } });
    expect(response.body.usage.input_tokens).toBe(words('Car door in photo_1 Where is the dent?') + 85);
    expectErrorBody(
      await decide({ model: 'jev-1.13', state: 'Car door', questions }),
      400,
      '/v1/decisions',
      /^Body validation error! questions\.where\.type: Expected one of 'noul', 'choice', 'score' for test\/jev-1\.13: 'box' \(experimental\) is answered only by .*Received 'box'$/,
    );
    expectErrorBody(await decide({ model: 'jev-1.13', state: 'photo_1', questions: { q: jevQuestions.is_complaint }, assets }), 400, '/v1/decisions', /^Body validation error! assets: test\/jev-1\.13 reads no images\. Received 1 image$/);
  });

  it.each([
    [{ assets: { clip: { type: 'audio', format: 'mp3', data_base64: 'AAAA' } } }, /^Body validation error! assets\.clip\.type: Expected 'image': decision models take no audio\. Received 'audio'$/],
    [{ assets: { clip: { type: 'video', format: 'mp4', data_base64: 'AAAA' } } }, /^Body validation error! assets\.clip\.type: Expected 'image': decision models take no video\. Received 'video'$/],
    [{ assets: { photo_1: { type: 'image', format: 'bmp', data_base64: PNG } } }, /^Body validation error! assets\.photo_1\.format: Expected one of 'png', 'jpeg', 'webp', 'gif'\. Received 'bmp'$/],
    [{ assets: { photo_1: { type: 'image', format: 'jpeg', data_base64: PNG } } }, /^Body validation error! assets\.photo_1\.data_base64: Expected jpeg image data\./],
    [{ assets: { other: { type: 'image', format: 'png', data_base64: PNG } } }, /^Body validation error! assets\.other: Expected every asset to be referenced by name from state\./],
    [{ state: 'see data:image/png;base64,AAAA' }, /^Body validation error! state: Expected text: images go in assets/],
    [{ questions: { q: { type: 'choice', instructions: 'x', criteria: { only: 'one' } } } }, /^Body validation error! questions\.q\.criteria: Expected 2 to 255 options\. Received 1$/],
    [{ questions: { q: { type: 'score', instructions: 'x', criteria: Array.from({ length: 11 }, (_, i) => `level ${i}`) } } }, /^Body validation error! questions\.q\.criteria: Expected 2 to 10 levels\. Received 11$/],
    [{ questions: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`q${i}`, { type: 'noul', instructions: 'x' }])) }, /^Body validation error! questions: Expected 1 to 64 questions\. Received 65$/],
    [{ questions: { q: { type: 'maybe', instructions: 'x' } } }, /^Body validation error! questions\.q\.type: Expected one of 'noul', 'choice', 'score', 'box'\. Received 'maybe'$/],
    [{ model: undefined }, /^Body validation error! model: Expected a non-empty string\. Received nothing$/],
  ])('refuses bad Jev input with 400: %#', async (change, message) => {
    const body = { model: 'jev-1.14', state: 'photo_1 shows it', questions: { q: jevQuestions.is_complaint }, ...change };
    expectErrorBody(await decide(body), 400, '/v1/decisions', message);
  });

  it('refuses a body in the other shape with a 400 naming the shape the model takes', async () => {
    expectErrorBody(
      await decide({ model: 'jev-1.14', input: state, questions: [{ name: 'q', type: 'predicate' }] }),
      400,
      '/v1/decisions',
      /^Body validation error! input: test\/jev-1\.14 takes the Jev shape: `state` .*questions` as an object of named questions/,
    );
    expectErrorBody(
      await decide({ model: 'luna', state, questions: jevQuestions }),
      400,
      '/v1/decisions',
      /^Body validation error! state: test\/luna takes the Luna shape: `input` .*`questions` as an array of named questions/,
    );
    expectErrorBody(await decide({ model: 'test/chat-only', state, questions: jevQuestions }), 400, '/v1/decisions', /^Body validation error! model: 'test\/chat-only' is an openai\/chat-completions model, not a decision model\.$/);
    expectErrorBody(await decide({ model: 'no-such-model', state, questions: jevQuestions }), 404, '/v1/decisions');
  });

  it('answers the Luna shape through the OpenAI decisions endpoint, refusals included', async () => {
    const questions = [
      { name: 'is_complaint', type: 'predicate', instructions: 'Is the customer complaining?' },
      { name: 'topic', type: 'choice', choices: [{ value: 'billing', description: 'payments' }, { value: 'shipping' }] },
      { name: 'urgency', type: 'score', levels: [{ label: 'low' }, { label: 'medium' }, { label: 'high' }] },
      { name: 'diagnosis', type: 'predicate', instructions: 'refuse me please' },
    ];
    const input = [{ role: 'user', content: [{ type: 'input_text', text: state }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}` }] }];
    const response = await decide({ model: 'luna', input, questions });
    expect(response.status).toBe(200);
    expect(response.body.model).toBe('test/luna');
    expect(response.body.answers).toEqual(lunaAnswers(questions));
    expect((response.body.answers as Array<{ type: string }>)[3]).toEqual({ type: 'refusal', name: 'diagnosis' });
    expect(emulator.requests.at(-1)!.path).toBe('/v1/decisions');
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'gpt-6-luna', input, questions });
    expect(response.body.usage.output_tokens).toBe(4);
    // Azure serves Luna chat but has no decisions API: skipped on the way, refused when pinned.
    expectErrorBody(await decide({ model: 'luna', provider: 'azure', input: state, questions }), 400, '/v1/decisions', /^Body validation error! provider: azure offers no decisions API for test\/luna; pick another source\.$/);
    expectErrorBody(
      await decide({ model: 'luna', input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }], questions }),
      400,
      '/v1/decisions',
      /^Body validation error! input\[0\]\.content\[0\]\.type: Expected 'input_text' or 'input_image': decision models take no audio, video or files/,
    );
  });

  it('computes the chat-logprobs fallback from known log probabilities (one call per question, max_tokens 1, top 20)', async () => {
    const before = emulator.requests.length;
    const response = await decide({ model: 'logprobs', state, questions: jevQuestions });
    expect(response.status).toBe(200);
    const calls = emulator.requests.slice(before).filter((request) => request.path === '/v1/chat/completions');
    expect(calls).toHaveLength(3);
    for (const request of calls) expect(request.body).toMatchObject({ max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 });
    const [yes, no] = [Math.exp(-0.2), Math.exp(-1.8)];
    const choice = renormalised(['A', 'B', 'C']);
    const score = renormalised(['0', '1', '2']);
    const answers = response.body.answers as Record<string, Record<string, unknown>>;
    expect(answers.is_complaint.type).toBe('noul');
    expect(answers.is_complaint.noul).toBeCloseTo(yes / (yes + no), 12);
    expect(answers.topic.choice).toBe('billing');
    expect(answers.topic.confidence).toBeCloseTo(choice[0], 12);
    const topicProbabilities = answers.topic.probabilities as Record<string, number>;
    ['billing', 'shipping', 'other'].forEach((option, i) => expect(topicProbabilities[option]).toBeCloseTo(choice[i], 12));
    expect(answers.urgency.score).toBeCloseTo(0 * score[0] + 1 * score[1] + 2 * score[2], 12);
    expect(answers.urgency.confidence).toBeCloseTo(score[1], 12);
    expect(answers.urgency.legend).toEqual({ '0': 'can wait', '1': 'this week', '2': 'today' });
    expect(response.body.usage.output_tokens).toBe(3);
    expect(response.body.usage.input_tokens).toBeGreaterThan(3 * words(state));
  });

  it('splits more than 20 options into rounds and combines them through the final round', async () => {
    const criteria = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`o${i}`, `option number ${i}`]));
    const before = emulator.requests.length;
    const response = await decide({ model: 'logprobs', state, questions: { pick: { type: 'choice', instructions: 'Which one?', criteria } } });
    expect(response.status).toBe(200);
    expect(emulator.requests.slice(before).filter((request) => request.path === '/v1/chat/completions')).toHaveLength(3);
    // Groups o0-o19 (labels A-T) and o20-o24 (A-E) both see A, B, C; the final round offers o0 (A) and o20 (B).
    const within = renormalised(['A', 'B', 'C']);
    const final = renormalised(['A', 'B']);
    const raw = Array.from({ length: 25 }, (_, i) => {
      const [group, position] = i < 20 ? [0, i] : [1, i - 20];
      return position < 3 ? (final[group] / within[0]) * within[position] : 0;
    });
    const total = raw.reduce((a, b) => a + b, 0);
    const probabilities = (response.body.answers as Record<string, { probabilities: Record<string, number>; choice: string }>).pick;
    expect(probabilities.choice).toBe('o0');
    raw.forEach((p, i) => expect(probabilities.probabilities[`o${i}`]).toBeCloseTo(p / total, 12));
  });

  it('answers the Luna shape through the fallback too', async () => {
    const response = await decide({ model: 'test/luna-logprobs', input: state, questions: [{ name: 'ok', type: 'predicate' }, { name: 'c', type: 'choice', choices: [{ value: 'x' }, { value: 'y' }] }] });
    expect(response.status).toBe(200);
    const [yes, no] = [Math.exp(-0.2), Math.exp(-1.8)];
    const [ok, choice] = response.body.answers as Array<Record<string, unknown>>;
    expect(ok.type).toBe('predicate');
    expect(ok.probability).toBeCloseTo(yes / (yes + no), 12);
    expect(choice).toMatchObject({ type: 'choice', name: 'c', choice: 'x' });
  });

  it('holds credits for images too: a key that can pay for the text alone is refused the image', async () => {
    // 100,000 credits pay for 2,500 tokens; the hold counts the text's bytes, and 3,000 tokens per image.
    const { key: smallKey } = await harness.paidKey(100_000);
    const body = { model: 'jev-1.14', state: 'Car door in photo_1', questions: { q: jevQuestions.is_complaint } };
    expect((await call(url(), { token: smallKey, body })).status).toBe(200);
    const withImage = await call(url(), { token: smallKey, body: { ...body, assets: { photo_1: { type: 'image', format: 'png', data_base64: PNG } } } });
    expectErrorBody(withImage, 403, '/v1/decisions');
  });

  it('answers 502 when the chat model gives no label a probability, billing the calls it made', async () => {
    const { key: ownKey, accountId: own } = await harness.paidKey(100_000);
    const response = await call(url(), { token: ownKey, body: { model: 'test/logprobs-no-labels', state, questions: { q: jevQuestions.is_complaint } } });
    expectErrorBody(response, 502, '/v1/decisions', /^Bad Gateway: openai sent an invalid response: none of the labels yes, no is among the top log probabilities$/);
    await eventually(async () => (await harness.usageEntries(own, 10)).length === 1, 10_000);
    const [row] = await harness.usageEntries(own, 10);
    expect(row.endpoint).toBe('decisions');
    expect(row.units!.input_tokens).toBeGreaterThan(words(state));
  });

  it('falls back to the next source, and reports no output tokens for liquid/d1', async () => {
    const failover = await decide({ model: 'test/jev-failover', state, questions: { q: jevQuestions.is_complaint } });
    expect(failover.status).toBe(200);
    expect(emulator.requests.at(-1)!.body).toMatchObject({ model: 'jev-1.14' });
    const d1 = await decide({ model: 'd1', state: 'short text', questions: { q: jevQuestions.is_complaint } });
    expect(d1.status).toBe(200);
    expect(d1.body.usage.output_tokens).toBe(0);
    expectErrorBody(
      await decide({ model: 'd1', state: 'a long text '.repeat(40), questions: { q: jevQuestions.is_complaint } }),
      400,
      '/v1/decisions',
      /^Body validation error! state: Expected at most 40 tokens \(the context of test\/d1\)\. Received about \d+ tokens$/,
    );
  });

  it("times the decisions service's upstream calls and counts its fallbacks in /metrics", async () => {
    const metric = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
    const scrape = async () => (await fetch(`${harness.gateway}/metrics`)).text();
    const before = await scrape();
    const attempts = (provider: string, outcome: string) =>
      new RegExp(`^igw_upstream_request_duration_seconds_count\\{endpoint="decisions",provider="${provider}",outcome="${outcome}"\\} (\\d+)$`, 'm');
    const fallbacks = /^igw_upstream_fallbacks_total\{endpoint="decisions",provider="typesafe"\} (\d+)$/m;
    expect((await decide({ model: 'jev-1.13', state, questions: { q: jevQuestions.is_complaint } })).status).toBe(200);
    // System One answers 500, then vLLM answers. (Its failure in the test above cooled it briefly: wait that out.)
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await decide({ model: 'test/jev-failover', state, questions: { q: jevQuestions.is_complaint } })).status).toBe(200);
    const after = await scrape();
    const moved = (pattern: RegExp) => metric(after, pattern) - metric(before, pattern);
    expect(moved(attempts('typesafe', 'ok'))).toBe(1);
    expect(moved(attempts('vllm', 'ok'))).toBe(1);
    expect(moved(attempts('typesafe', 'error'))).toBeGreaterThanOrEqual(1);
    expect(moved(fallbacks)).toBe(1);
  });

  it('answers 504 when the decisions service does not reply in time, and bills what the worker had started', async () => {
    const response = await call(url(), { token: key, body: { model: 'test/jev-slow', state, questions: { q: jevQuestions.is_complaint } } });
    expectErrorBody(response, 504, '/v1/decisions', /^Gateway Timeout: the decisions service did not answer within 4000 ms\.$/);
    // The worker had taken the job: its content's count is billed, once.
    await eventually(async () => (await harness.usageEntries(accountId, 200)).some((row) => row.requestId === response.headers.get('x-request-id')), 10_000);
  });

  it("bills the prompt of an upstream call that ran into the model's timeout, and tries no other source", async () => {
    const { key: timedOutKey, accountId: timedOut } = await harness.paidKey(100_000);
    const response = await call(url(), { token: timedOutKey, body: { model: 'test/jev-timeout', state, questions: { q: jevQuestions.is_complaint } } });
    expectErrorBody(response, 504, '/v1/decisions', /^Gateway Timeout: typesafe did not answer/);
    // The prompt is billed by the gateway's own count of it (the upstream reported nothing): at least a token a word.
    await eventually(async () => (await harness.usageEntries(timedOut, 10)).length === 1, 10_000);
    const [row] = await harness.usageEntries(timedOut, 10);
    const billedTokens = (row.units as { input_tokens: number }).input_tokens;
    expect(billedTokens).toBeGreaterThanOrEqual(words(state) + words(jevQuestions.is_complaint.instructions));
    expect(row).toMatchObject({ endpoint: 'decisions', model: 'test/jev-timeout', units: { input_tokens: billedTokens }, credits: String(creditsFor(billedTokens)) });
    expect(emulator.requests.some((request) => (request.body as { model?: string }).model === 'jev-1.14@after-timeout')).toBe(false);
  });

  it('bills a client that left once the decision was under way what the upstream reports (the hardening rule)', async () => {
    const { key: leaverKey, accountId: leaver } = await harness.paidKey(100_000);
    const abort = new AbortController();
    const sent = fetch(url(), {
      method: 'POST',
      headers: { authorization: `Bearer ${leaverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/jev-delayed', state, questions: { q: jevQuestions.is_complaint } }),
      signal: abort.signal,
    }).catch((error: unknown) => error);
    await eventually(async () => emulator.requests.some((request) => (request.body as { model?: string }).model === 'jev-1.14@delay=800'), 5_000);
    abort.abort();
    expect((await sent as { name?: string }).name).toBe('AbortError');
    const inputTokens = words(state) + words(jevQuestions.is_complaint.instructions);
    await eventually(async () => (await harness.usageEntries(leaver, 10)).length === 1, 10_000);
    const [row] = await harness.usageEntries(leaver, 10);
    expect(row).toMatchObject({ endpoint: 'decisions', model: 'test/jev-delayed', units: { input_tokens: inputTokens }, credits: String(creditsFor(inputTokens)) });
  });

  it('is described in the Swagger document with both shapes', async () => {
    const doc = await call<{ paths: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown; examples: Record<string, unknown> }> } } }>; components: { schemas: Record<string, unknown> } }>(
      `${harness.gateway}/docs-json`,
    );
    const body = doc.body.paths['/v1/decisions'].post.requestBody.content['application/json'];
    expect(body.schema).toEqual({ oneOf: [{ $ref: '#/components/schemas/JevDecisionRequestDto' }, { $ref: '#/components/schemas/LunaDecisionRequestDto' }] });
    expect(Object.keys(body.examples)).toEqual(['jev', 'luna']);
    expect(Object.keys(doc.body.components.schemas)).toEqual(expect.arrayContaining(['JevDecisionRequestDto', 'LunaDecisionRequestDto', 'DecisionResultDto']));
    expect(JSON.stringify(doc.body.components.schemas.JevDecisionRequestDto)).toMatch(/`box` \(experimental, typesafe\/jev-1\.14 only\)/);
  });

  it("writes one ledger row per decision, equal to meta.usage, charging input tokens only", async () => {
    const ledger = () => harness.usageEntries(accountId, 200);
    await eventually(async () => (await ledger()).filter((row) => answered.has(row.requestId!)).length >= answered.size, 10_000);
    const rows = (await ledger()).filter((row) => answered.has(row.requestId!));
    expect(rows).toHaveLength(answered.size);
    for (const row of rows) {
      const response = answered.get(row.requestId!)!;
      expect(row.endpoint).toBe('decisions');
      expect(row.model).toBe(response.model);
      expect(row.units).toEqual({ input_tokens: response.usage.input_tokens });
      expect(row.credits).toBe(String(response.meta.usage.credits_used));
      expect(row.credits).toBe(String(creditsFor(response.usage.input_tokens)));
    }
  });
});
