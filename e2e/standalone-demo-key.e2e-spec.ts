import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DemoStandalone, type ListedKey } from './support/admin-tools-harness';
import { call } from './support/http';

interface StoredDemoKey {
  accountId: string;
  keyId: string;
  key: string;
}

/** `npm start -- --demo` across restarts: one demo key, reused while it works, never a trail of working keys. */
describe('standalone --demo key, end to end', () => {
  let standalone: DemoStandalone;

  const readDemoKey = async (): Promise<StoredDemoKey> => JSON.parse(await readFile(path.join(standalone.dataDir, 'demo-key'), 'utf8')) as StoredDemoKey;
  const balanceStatus = async (key: string): Promise<number> => (await call(`${standalone.billing}/v1/billing/balance`, { token: key })).status;
  const activeKeyIds = async (accountId: string): Promise<string[]> =>
    (await standalone.cliJson<{ data: ListedKey[] }>(['keys', 'list', accountId])).data.filter((key) => key.revokedAt === null).map((key) => key.id);

  async function restart(): Promise<void> {
    expect(await standalone.stop()).toBe(0);
    await standalone.start();
  }

  beforeAll(async () => {
    standalone = await DemoStandalone.create();
    await standalone.start();
  }, 120_000);

  afterAll(async () => {
    await standalone?.dispose();
  });

  it("the banner's Try it lines, pasted into a shell as they are, answer: a chat completion and the key's balance", async () => {
    const block = /^Try it \(in another terminal\):\n((?: {2}.*\n)+)/m.exec(standalone.server!.output());
    expect(block).not.toBeNull();
    const lines = block![1];
    expect(lines).toContain(`export KEY=${(await readDemoKey()).key}`);
    const { stdout } = await promisify(execFile)('bash', ['-e', '-c', lines.replace(/^( *)curl /gm, '$1curl -sS --fail-with-body ')], { timeout: 30_000 });
    expect(stdout).toContain('"object":"chat.completion"');
    expect(stdout).toMatch(/"balance":\d/);
  });

  it("answers a structured-output request on the shipped catalogue's Claude with JSON satisfying the schema, through chat and Messages", async () => {
    const { key } = await readDemoKey();
    const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'], additionalProperties: false };
    const satisfies = (text: string | undefined) => {
      const value = JSON.parse(text ?? 'null') as { city: unknown; days: unknown };
      expect(Object.keys(value).sort()).toEqual(['city', 'days']);
      expect(typeof value.city).toBe('string');
      expect(Number.isInteger(value.days) && (value.days as number) >= 1 && (value.days as number) <= 7).toBe(true);
    };
    const chat = await call<{ choices: Array<{ message: { content: string } }> }>(`${standalone.gateway}/v1/chat/completions`, {
      token: key,
      body: { model: 'claude-sonnet-5-5', messages: [{ role: 'user', content: 'Plan a trip' }], response_format: { type: 'json_schema', json_schema: { name: 'trip', schema } } },
    });
    expect(chat.status).toBe(200);
    satisfies(chat.body.choices[0].message.content);
    const messages = await call<{ content: Array<{ type: string; text?: string }> }>(`${standalone.gateway}/v1/messages`, {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model: 'claude-sonnet-5-5', max_tokens: 512, messages: [{ role: 'user', content: 'Plan a trip' }], output_config: { format: { type: 'json_schema', schema } } },
    });
    expect(messages.status).toBe(200);
    satisfies(messages.body.content.find((block) => block.type === 'text')?.text);
  });

  it('reuses one key across starts, kept owner-only, and replaces it (revoking strays) once it stops working', async () => {
    const first = await readDemoKey();
    expect((await stat(path.join(standalone.dataDir, 'demo-key'))).mode & 0o777).toBe(0o600);
    expect(standalone.server!.output()).toContain(first.key);
    expect(await balanceStatus(first.key)).toBe(200);

    await restart();
    expect(await readDemoKey()).toEqual(first);
    expect(standalone.server!.output()).toContain(first.key);
    expect(await activeKeyIds(first.accountId)).toEqual([first.keyId]);

    // A second working demo key (say from a start that crashed before writing its file), and the kept key revoked.
    const stray = await call<{ id: string; key: string }>(`${standalone.billing}/admin/v1/accounts/${first.accountId}/keys`, {
      token: await standalone.adminToken(),
      body: { name: 'demo' },
    });
    expect(stray.status).toBe(201);
    expect((await standalone.cli(['keys', 'revoke', first.keyId])).code).toBe(0);

    await restart();
    const second = await readDemoKey();
    expect(second.accountId).toBe(first.accountId);
    expect(second.key).not.toBe(first.key);
    expect(standalone.server!.output()).toContain(second.key);
    expect(await balanceStatus(second.key)).toBe(200);
    expect(await balanceStatus(stray.body.key)).toBe(401);
    expect(await activeKeyIds(first.accountId)).toEqual([second.keyId]);
  }, 180_000);
});
