import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { eventually } from '@igw/testing';
import { DemoStandalone } from './support/admin-tools-harness';
import { call, expectErrorBody } from './support/http';

const README = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');

/** The arguments of the README's first `npx igw <command> ...` line for that command, as a shell would split them. */
function readmeCliArguments(command: string): string[] {
  const line = README.split('\n').find((candidate) => candidate.startsWith(`npx igw ${command} `));
  if (!line) throw new Error(`the README has no "npx igw ${command}" line`);
  const words = line.replace(/#.*$/, '').trim().split(/\s+/).slice(2);
  // Placeholders such as <accountId> are filled in by the caller, as a reader would.
  return words;
}

/**
 * The README's quick start, followed as a newcomer would: `npm start -- --demo`, an account and a
 * key with the CLI lines the README prints, a chat request and a streamed one with the official
 * SDK, the balance, then Ctrl-C. Runs in both CI modes (embedded defaults, or the run's
 * DATABASE_URL/REDIS_URL).
 */
describe('the README quick start, word by word', () => {
  let standalone: DemoStandalone;

  beforeAll(async () => {
    standalone = await DemoStandalone.create();
    await standalone.start();
  }, 120_000);

  afterAll(async () => {
    await standalone?.dispose();
  });

  it('starts, creates an account and a key with the CLI, answers the SDK (whole and streamed), bills it, and stops on Ctrl-C with exit 0', async () => {
    const accountArgs = readmeCliArguments('accounts create');
    expect(accountArgs).toContain('--usd');
    const account = await standalone.cliJson<{ id: string; balance: number; lowBalance?: boolean }>(accountArgs);
    expect(account.balance).toBeGreaterThanOrEqual(2_000_000);

    const keyArgs = readmeCliArguments('keys create').map((word) => (word === '<accountId>' ? account.id : word));
    const { key } = await standalone.cliJson<{ key: string }>(keyArgs);
    expect(key).toMatch(/^igw_/);

    const client = new OpenAI({ baseURL: `${standalone.gateway}/v1`, apiKey: key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    expect(completion.choices[0].message.content).toBeTruthy();
    const charged = (completion as unknown as { meta: { usage: { credits_used: number } } }).meta.usage.credits_used;
    expect(charged).toBeGreaterThan(0);

    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hello again' }],
    });
    let text = '';
    let streamedUsage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) streamedUsage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(streamedUsage).toBeDefined();

    // The README's balance line: `curl $BILLING/v1/billing/balance -H "Authorization: Bearer $KEY"`.
    expect(README).toContain('/v1/billing/balance -H "Authorization: Bearer $KEY"');
    // Billing applies usage a moment after the answer (the usage queue batches every 500 ms).
    await eventually(async () => {
      const balance = await call<{ balance: number }>(`${standalone.billing}/v1/billing/balance`, { token: key });
      return balance.status === 200 && balance.body.balance < account.balance;
    }, 15_000, 100);

    // The balance asked of the gateway's port, or a model endpoint of billing's: the 404 says which port serves it.
    const misdirected = await call(`${standalone.gateway}/v1/billing/balance?x=1`, { token: key });
    expectErrorBody(misdirected, 404, '/v1/billing/balance', /^Not Found: GET \/v1\/billing\/balance is not an endpoint of the gateway service; its Swagger UI at \/docs lists them\. The billing service serves .*BILLING_PORT/);
    const modelsOnBilling = await call(`${standalone.billing}/v1/models`, { token: key });
    expectErrorBody(modelsOnBilling, 404, '/v1/models', /^Not Found: GET \/v1\/models is not an endpoint of the billing service; .*the gateway's, on its own port \(PORT/);

    expect(await standalone.stop()).toBe(0);
    expect(standalone.lastOutput).not.toMatch(/Unhandled|57P01|\n\s+at /);
  }, 90_000);
});
