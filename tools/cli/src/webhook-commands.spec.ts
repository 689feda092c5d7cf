import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './cli';
import { parseCommand, UsageError, type AdminRequest } from './commands';

const ACCOUNT = '0b7f3c1e-5d2a-4c8e-9f10-2a3b4c5d6e7f';
const TOKEN = 'cli-webhook-admin-token-0123456789';
const SECRET = 'whsec_cli_0123456789abcdef';

function requestOf(argv: string[]): AdminRequest {
  const command = parseCommand(argv);
  if (command.kind !== 'request') throw new Error(`expected a request, got ${command.kind}`);
  return command.request;
}

function usageErrorOf(argv: string[]): string {
  try {
    parseCommand(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`expected a usage error for ${JSON.stringify(argv)}`);
}

describe('webhook commands', () => {
  it('webhook set: PUTs the URL and the threshold in credits, USD or none, and names the secret file', () => {
    expect(requestOf(['webhook', 'set', ACCOUNT, '--webhook-url', 'https://hooks.example.com/gw', '--secret-file', './whsec', '--balance-threshold', '2500.5'])).toEqual({
      method: 'PUT',
      path: `/admin/v1/accounts/${ACCOUNT}/webhook`,
      body: { url: 'https://hooks.example.com/gw', balanceThreshold: 2500.5 },
      secretFile: './whsec',
    });
    expect(requestOf(['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h.example/', '--balance-threshold-usd', '5']).body).toEqual({ url: 'https://h.example/', balanceThresholdUsd: 5 });
    expect(requestOf(['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h.example/', '--balance-threshold', 'none']).body).toEqual({ url: 'https://h.example/', balanceThreshold: null });
  });

  it('webhook get, delete and events', () => {
    expect(requestOf(['webhook', 'get', ACCOUNT])).toEqual({ method: 'GET', path: `/admin/v1/accounts/${ACCOUNT}/webhook` });
    expect(requestOf(['webhook', 'delete', ACCOUNT])).toEqual({ method: 'DELETE', path: `/admin/v1/accounts/${ACCOUNT}/webhook`, noContentOutput: { webhookRemoved: ACCOUNT } });
    expect(requestOf(['webhook', 'events', ACCOUNT, '--limit', '5'])).toEqual({ method: 'GET', path: `/admin/v1/accounts/${ACCOUNT}/webhook/events?limit=5` });
  });

  it.each([
    [['webhook', 'set', ACCOUNT], '"webhook set" needs --webhook-url'],
    [['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h/', '--balance-threshold', '1', '--balance-threshold-usd', '1'], 'not both'],
    [['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h/', '--balance-threshold', 'lots'], '--balance-threshold must be a number'],
    [['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h/', '--secret', SECRET], "Unknown option '--secret'"],
    [['webhook', 'get'], '"webhook get" needs <accountId>'],
    [['webhook', 'events', ACCOUNT, '--limit', '0'], '--limit must be a whole number of at least 1'],
    [['webhook', 'get', ACCOUNT, '--webhook-url', 'https://h/'], '--webhook-url is not an option of "webhook get"'],
  ])('refuses %j', (argv, message) => {
    expect(usageErrorOf(argv)).toContain(message);
  });
});

describe('webhook set against a recording admin API', () => {
  let server: Server;
  let baseUrl: string;
  let dataDir: string;
  const requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders; rawBody: string }> = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'igw-cli-webhook-'));
    server = createServer((req, res) => {
      let rawBody = '';
      req.on('data', (chunk: Buffer) => (rawBody += chunk.toString()));
      req.on('end', () => {
        requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody });
        const body = JSON.parse(rawBody || '{}') as { url?: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ accountId: ACCOUNT, url: body.url, secretSet: true, balanceThreshold: null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
  });

  async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { stdout: { write: (chunk: string) => (stdout += chunk) }, stderr: { write: (chunk: string) => (stderr += chunk) }, env: { BILLING_URL: baseUrl, ADMIN_TOKEN: TOKEN } });
    return { code, stdout, stderr };
  }

  it('sends the secret read from its file (without the final line end) and prints the answer, which has no secret', async () => {
    const file = path.join(dataDir, 'whsec');
    await writeFile(file, `${SECRET}\n`);
    const result = await cli(['webhook', 'set', ACCOUNT, '--webhook-url', 'https://hooks.example.com/gw', '--secret-file', file]);
    expect(result.code).toBe(0);
    const request = requests.at(-1)!;
    expect([request.method, request.path]).toEqual(['PUT', `/admin/v1/accounts/${ACCOUNT}/webhook`]);
    expect(JSON.parse(request.rawBody)).toStrictEqual({ url: 'https://hooks.example.com/gw', secret: SECRET });
    expect(JSON.parse(result.stdout)).toMatchObject({ secretSet: true });
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });

  it('exits 2 without calling the API when the secret file is missing or empty', async () => {
    const before = requests.length;
    const missing = await cli(['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h.example/', '--secret-file', path.join(dataDir, 'nope')]);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toContain('Cannot read the webhook secret from');
    expect(missing.stderr).toContain('ENOENT');
    const empty = path.join(dataDir, 'empty');
    await writeFile(empty, '\n');
    expect((await cli(['webhook', 'set', ACCOUNT, '--webhook-url', 'https://h.example/', '--secret-file', empty])).stderr).toContain('is empty');
    expect(requests.length).toBe(before);
  });
});
