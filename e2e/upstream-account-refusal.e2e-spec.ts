import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually } from '@igw/testing';
import { call, expectErrorBody } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** What OpenRouter answers an account short of credit: the account's own figures. */
const OPENROUTER_402 = {
  error: {
    message: 'This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford 5263. Your remaining balance is $0.0421.',
    code: 402,
    metadata: { balance: 0.0421 },
  },
};

const REFUSALS: Record<string, { status: number; body: unknown }> = {
  'refuse-402': { status: 402, body: OPENROUTER_402 },
  'refuse-401': { status: 401, body: { error: { message: 'Incorrect API key provided: sk-op***-key. Project proj_operator_42.', type: 'invalid_request_error', code: 'invalid_api_key' } } },
  'refuse-403': { status: 403, body: { error: { message: 'Project proj_operator_42 does not have access to model refuse-403 in organisation org-operator.', type: 'invalid_request_error' } } },
  'refuse-400': { status: 400, body: { error: { message: "Invalid value for 'temperature': must be at most 2.", type: 'invalid_request_error', param: 'temperature' } } },
};

/** An OpenAI-compatible upstream that refuses by model name, else answers. */
async function startRefusingUpstream(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const model = (JSON.parse(text) as { model: string }).model;
      requests.push(model);
      const refusal = REFUSALS[model];
      const [status, body] = refusal
        ? [refusal.status, refusal.body]
        : [200, { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }];
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A provider refusing the operator's own account (its key, its project, its credit) is the
 * operator's problem: the client gets a 502 naming no figure of that account, the provider's
 * words go to the log, and another source takes the call where the model has one. A refusal
 * of the request itself still reaches the client.
 */
describe("upstream refusals of the operator's account", () => {
  let upstream: Awaited<ReturnType<typeof startRefusingUpstream>>;
  let harness: StandaloneHarness;
  let key: string;

  beforeAll(async () => {
    upstream = await startRefusingUpstream();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/account-refusal-catalogue.yaml'),
      OPENROUTER_API_KEY: 'openrouter-operator-key',
      OPENROUTER_BASE_URL: upstream.url,
      OPENAI_API_KEY: 'openai-operator-key',
      OPENAI_BASE_URL: upstream.url,
    });
    ({ key } = await harness.paidKey(1_000_000));
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await upstream?.close();
  });

  const chat = (model: string, stream = false) =>
    call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) } });

  it("answers an OpenRouter 402 with a gateway 502, the balance only in the operator's log", async () => {
    const response = await chat('test/no-credit');
    expectErrorBody(response, 502, '/v1/chat/completions', /^Bad Gateway: the upstream provider openrouter refused the gateway's credentials or account \(402\)\.$/);
    const text = JSON.stringify(response.body);
    expect(text).not.toMatch(/afford|balance|0\.0421|credits/i);
    await eventually(async () => harness.process.output().includes("openrouter refused the gateway's own account (402): This request requires more credits"), 5_000);
    expect(harness.process.output()).toContain('Your remaining balance is $0.0421');
  });

  it.each([
    ['401', 'test/bad-key', /sk-op|proj_operator/],
    ['403', 'test/forbidden', /proj_operator|org-operator/],
  ])('answers a provider %s about the operator with a gateway 502', async (status, model, secretText) => {
    const response = await chat(model);
    expectErrorBody(response, 502, '/v1/chat/completions', new RegExp(`^Bad Gateway: the upstream provider openai refused the gateway's credentials or account \\(${status}\\)\\.$`));
    expect(JSON.stringify(response.body)).not.toMatch(secretText);
  });

  it('says the same in a stream', async () => {
    const response = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/no-credit', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(502);
    expect(text).toContain("refused the gateway's credentials or account (402)");
    expect(text).not.toMatch(/afford|0\.0421/);
  });

  it('moves on to the next source when one refuses the account, and leaves the refused one out for a minute', async () => {
    const before = upstream.requests.length;
    const response = await chat('test/no-credit-then-openai');
    expect(response.status).toBe(200);
    // The stream above was refused by the same deployment: it is cooling, so nothing is sent there now.
    expect(upstream.requests.slice(before)).toEqual(['answer']);
  });

  it("still passes a provider's refusal of the request itself through", async () => {
    const response = await chat('test/invalid');
    expectErrorBody(response, 400, '/v1/chat/completions', /^Upstream provider openai rejected the request: Invalid value for 'temperature'/);
  });
});
