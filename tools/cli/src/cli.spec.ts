import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './cli';

// A stand-in for the billing admin API: records every request and answers like the real one.
interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
}

const TOKEN = 'test-admin-token-0123456789';
const ACCOUNT = '0b7f3c1e-5d2a-4c8e-9f10-2a3b4c5d6e7f';
const MISSING = '99999999-9999-4999-8999-999999999999';
const KEY = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

const CREATED = '2025-01-01T00:00:00.000Z';
const account = {
  id: ACCOUNT,
  name: 'Acme',
  balance: 1000,
  plan: 'paid',
  lowBalanceThreshold: 0,
  status: 'active',
  autoDebitStatus: 'disabled',
  createdAt: CREATED,
  updatedAt: CREATED,
};
const usagePage = {
  object: 'list',
  data: [
    {
      id: '42',
      kind: 'usage',
      requestId: 'req-9',
      keyId: KEY,
      model: 'openai/gpt-4o-mini',
      endpoint: 'chat.completions',
      units: { input_tokens: 10, output_tokens: 20 },
      credits: '27',
      usd: '0.0000135',
      catalogueRevision: 1,
      prices: [{ unit: 'input_tokens', price: 0.15, per: 1_000_000 }],
      reason: null,
      occurredAt: CREATED,
      recordedAt: CREATED,
    },
  ],
  nextCursor: 'WyIyMDI1LTAxLTAxVDAwOjAwOjAwLjAwMDAwMFoiLCI0MiJd',
};
const usageSummary = {
  object: 'list',
  data: [{ day: '2025-01-01', model: 'openai/gpt-4o-mini', requests: 1, credits: '27', usd: '0.0000135', units: { input_tokens: 10, output_tokens: 20 } }],
  totals: { requests: 1, credits: '27', usd: '0.0000135' },
};
const notFound = {
  message: 'Account not found',
  path: `/admin/v1/accounts/${MISSING}`,
  requestId: 'req-1',
  statusCode: 404,
  timestamp: CREATED,
};

let server: Server;
let baseUrl: string;
let requests: RecordedRequest[];
/** GET /model/{name} calls, as the gateway would get them (public, no token). */
let modelLookups: string[];
/** The fake gateway's catalogue: every id and alias, lower-cased, to its id. */
const CATALOGUE_NAMES: Record<string, string> = {
  'openai/gpt-4o-mini': 'openai/gpt-4o-mini',
  'gpt-4o-mini': 'openai/gpt-4o-mini',
  'anthropic/claude-3-5-haiku-latest': 'anthropic/claude-3-5-haiku-latest',
  haiku: 'anthropic/claude-3-5-haiku-latest',
};
const KEY_LIST = {
  object: 'list',
  data: [{ id: KEY, name: 'ci', prefix: 'igw_sec', accountId: ACCOUNT, createdAt: CREATED, revokedAt: null }],
};
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'igw-cli-'));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
      };
      const send = (status: number, body?: unknown): void => {
        if (body === undefined) {
          res.writeHead(status).end();
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (recorded.method === 'GET' && recorded.path.startsWith('/model/')) {
        const name = decodeURIComponent(recorded.path.slice('/model/'.length));
        modelLookups.push(name);
        const id = CATALOGUE_NAMES[name.toLowerCase()];
        if (id === undefined) return send(404, { ...notFound, message: `Not Found: no model named '${name}' in the catalogue.`, path: recorded.path });
        return send(200, { object: 'model', data: { id, aliases: [] } });
      }
      requests.push(recorded);
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        return send(401, { ...notFound, message: 'Unauthorized', statusCode: 401, path: recorded.path });
      }
      const route = `${recorded.method} ${recorded.path}`;
      if (route === 'POST /admin/v1/accounts') return send(201, account);
      if (route === `GET /admin/v1/accounts/${ACCOUNT}`) return send(200, account);
      if (route === `POST /admin/v1/accounts/${ACCOUNT}/keys`) {
        return send(201, { id: KEY, key: 'igw_secret', prefix: 'igw_sec', name: 'ci', accountId: ACCOUNT, createdAt: CREATED });
      }
      if (route === `POST /admin/v1/accounts/${ACCOUNT}/credits`) return send(200, { balance: 995 });
      if (route === `DELETE /admin/v1/keys/${KEY}`) return send(204);
      if (route === `GET /admin/v1/accounts/${ACCOUNT}/keys`) return send(200, KEY_LIST);
      if (route === `PATCH /admin/v1/accounts/${ACCOUNT}`) return send(200, { ...account, ...(JSON.parse(recorded.rawBody) as object) });
      if (recorded.method === 'GET' && recorded.path.startsWith(`/admin/v1/accounts/${ACCOUNT}/usage/summary`)) return send(200, usageSummary);
      if (recorded.method === 'GET' && recorded.path.startsWith(`/admin/v1/accounts/${ACCOUNT}/usage`)) return send(200, usagePage);
      return send(404, { ...notFound, path: recorded.path });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  requests = [];
  modelLookups = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dataDir, { recursive: true, force: true });
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

type Env = Record<string, string | undefined>;

async function cli(argv: string[], env: Env = { BILLING_URL: baseUrl, GATEWAY_URL: baseUrl, ADMIN_TOKEN: TOKEN, DATA_DIR: dataDir }): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env,
  });
  return { code, stdout, stderr };
}

const only = (): RecordedRequest => {
  expect(requests).toHaveLength(1);
  return requests[0];
};

describe('runCli against a recording admin API', () => {
  it('accounts create: POSTs a JSON body with numbers and prints the account', async () => {
    const argv = ['accounts', 'create', '--name', 'Acme', '--credits', '1000', '--plan', 'paid', '--low-balance-threshold', '50'];
    const result = await cli(argv);
    const request = only();
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/admin/v1/accounts');
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.rawBody).toBe('{"name":"Acme","credits":1000,"plan":"paid","lowBalanceThreshold":50}');
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify(account, null, 2)}\n`, stderr: '' });
  });

  it('accounts get: GETs without a body', async () => {
    const result = await cli(['accounts', 'get', ACCOUNT]);
    const request = only();
    expect([request.method, request.path, request.rawBody]).toEqual(['GET', `/admin/v1/accounts/${ACCOUNT}`, '']);
    expect(request.headers['content-type']).toBeUndefined();
    expect(JSON.parse(result.stdout)).toEqual(account);
    expect(result.code).toBe(0);
  });

  it('keys create: POSTs {name} and prints the created key', async () => {
    const result = await cli(['keys', 'create', ACCOUNT, '--name', 'ci']);
    const request = only();
    expect([request.method, request.path, request.rawBody]).toEqual(['POST', `/admin/v1/accounts/${ACCOUNT}/keys`, '{"name":"ci"}']);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: KEY, key: 'igw_secret', accountId: ACCOUNT });
    expect(result.code).toBe(0);
  });

  it('credits add: sends negative credits as a JSON number', async () => {
    const result = await cli(['credits', 'add', ACCOUNT, '-5', '--reason', 'correction']);
    const request = only();
    expect([request.method, request.path]).toEqual(['POST', `/admin/v1/accounts/${ACCOUNT}/credits`]);
    expect(JSON.parse(request.rawBody)).toStrictEqual({ credits: -5, reason: 'correction' });
    expect(result).toEqual({ code: 0, stdout: '{\n  "balance": 995\n}\n', stderr: '' });
  });

  it('keys revoke: DELETEs and prints {"revoked": id} on 204', async () => {
    const result = await cli(['keys', 'revoke', KEY]);
    const request = only();
    expect([request.method, request.path, request.rawBody]).toEqual(['DELETE', `/admin/v1/keys/${KEY}`, '']);
    expect(result).toEqual({ code: 0, stdout: `{\n  "revoked": "${KEY}"\n}\n`, stderr: '' });
  });

  it('accounts update: PATCHes the settings, null for "none", and prints the account', async () => {
    const result = await cli(['accounts', 'update', ACCOUNT, '--status', 'suspended', '--rpm', '60', '--concurrency', 'none']);
    const request = only();
    expect([request.method, request.path]).toEqual(['PATCH', `/admin/v1/accounts/${ACCOUNT}`]);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.rawBody).toBe('{"status":"suspended","requestsPerMinute":60,"concurrentRequests":null}');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ...account, status: 'suspended', requestsPerMinute: 60, concurrentRequests: null });
  });

  it('usage list: GETs with the filters in the query string and prints the page', async () => {
    const result = await cli(['usage', 'list', ACCOUNT, '--model', 'openai/gpt-4o-mini', '--from', '2025-01-01', '--limit', '10']);
    const request = only();
    expect([request.method, request.path, request.rawBody]).toEqual([
      'GET',
      `/admin/v1/accounts/${ACCOUNT}/usage?from=2025-01-01&model=openai%2Fgpt-4o-mini&limit=10`,
      '',
    ]);
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify(usagePage, null, 2)}\n`, stderr: '' });
  });

  it('usage summary: GETs the summary for the window and prints it', async () => {
    const result = await cli(['usage', 'summary', ACCOUNT, '--from', '2025-01-01', '--to', '2025-02-01']);
    const request = only();
    expect([request.method, request.path]).toEqual(['GET', `/admin/v1/accounts/${ACCOUNT}/usage/summary?from=2025-01-01&to=2025-02-01`]);
    expect(JSON.parse(result.stdout)).toEqual(usageSummary);
    expect(result.code).toBe(0);
  });

  it('prints the error body to stderr and exits 1 on an HTTP error', async () => {
    const result = await cli(['accounts', 'get', MISSING]);
    expect(only().path).toBe(`/admin/v1/accounts/${MISSING}`);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ ...notFound, path: `/admin/v1/accounts/${MISSING}` });
  });

  it('exits 1 with the server message on a wrong token', async () => {
    const result = await cli(['accounts', 'get', ACCOUNT, '--token', 'wrong-token-0123456789']);
    expect(only().headers.authorization).toBe('Bearer wrong-token-0123456789');
    expect(result.code).toBe(1);
    const [body, hint] = result.stderr.split(/\n(?=error: )/);
    expect(JSON.parse(body)).toMatchObject({ statusCode: 401, message: 'Unauthorized' });
    expect(hint).toContain('refused the admin token from --token');
  });

  it.each([
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'stale-env-token-0123456789' }, 'from ADMIN_TOKEN'],
    ['the token file', { ADMIN_TOKEN: '' }, 'from the file '],
  ])('on a 401 names the token source (%s) without printing the token', async (_label, tokenEnv, source) => {
    await writeFile(path.join(dataDir, 'admin-token'), 'stale-file-token-0123456789\n');
    try {
      const result = await cli(['accounts', 'get', ACCOUNT], { BILLING_URL: baseUrl, DATA_DIR: dataDir, ...tokenEnv });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${baseUrl} refused the admin token ${source}`);
      expect(result.stderr).not.toContain('stale-env-token-0123456789');
      expect(result.stderr).not.toContain('stale-file-token-0123456789');
      if (source.includes('file')) {
        expect(result.stderr).toContain(path.join(dataDir, 'admin-token'));
        expect(result.stderr).toContain('set the same ADMIN_TOKEN here');
      }
    } finally {
      await rm(path.join(dataDir, 'admin-token'));
    }
  });

  it('prefers ADMIN_TOKEN from the environment over the token file', async () => {
    await writeFile(path.join(dataDir, 'admin-token'), 'stale-file-token-0123456789\n');
    try {
      const result = await cli(['accounts', 'get', ACCOUNT], { BILLING_URL: baseUrl, DATA_DIR: dataDir, ADMIN_TOKEN: TOKEN });
      expect(result.code).toBe(0);
      expect(only().headers.authorization).toBe(`Bearer ${TOKEN}`);
    } finally {
      await rm(path.join(dataDir, 'admin-token'));
    }
  });

  it('accounts create --usd and credits add --usd send usd, not credits', async () => {
    let result = await cli(['accounts', 'create', '--name', 'Acme', '--usd', '10', '--plan', 'paid']);
    expect(only().rawBody).toBe('{"name":"Acme","usd":10,"plan":"paid"}');
    expect(result.code).toBe(0);
    requests = [];
    result = await cli(['credits', 'add', ACCOUNT, '--usd', '-2.5', '--reason', 'refund']);
    expect(JSON.parse(only().rawBody)).toStrictEqual({ usd: -2.5, reason: 'refund' });
    expect(result.code).toBe(0);
  });

  it.each([
    [['accounts', 'create', '--usd', '10', '--credits', '5'], 'not both'],
    [['credits', 'add', ACCOUNT, '5', '--usd', '1'], 'not both'],
    [['credits', 'add', ACCOUNT, '--usd', 'ten'], '--usd must be a number'],
    [['credits', 'add', ACCOUNT], 'needs <accountId> <credits>'],
  ])('refuses %j as bad usage without calling the API', async (argv, message) => {
    const result = await cli(argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(requests).toHaveLength(0);
  });

  it('keys list: GETs the account\'s keys and prints them', async () => {
    const result = await cli(['keys', 'list', ACCOUNT]);
    const request = only();
    expect([request.method, request.path, request.rawBody]).toEqual(['GET', `/admin/v1/accounts/${ACCOUNT}/keys`, '']);
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify(KEY_LIST, null, 2)}\n`, stderr: '' });
  });

  it.each([
    ['gpt-4o-mini', 'openai%2Fgpt-4o-mini'],
    ['HAIKU', 'anthropic%2Fclaude-3-5-haiku-latest'],
    ['openai/gpt-4o-mini', 'openai%2Fgpt-4o-mini'],
    ['retired/old-model', 'retired%2Fold-model'],
  ])('usage list --model %s filters on the catalogue id the gateway resolves it to', async (model, expected) => {
    const result = await cli(['usage', 'list', ACCOUNT, '--model', model]);
    expect(modelLookups).toEqual([model]);
    expect(only().path).toBe(`/admin/v1/accounts/${ACCOUNT}/usage?model=${expected}`);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('usage list --model filters on the name as typed, with a note, when the gateway is unreachable', async () => {
    const result = await cli(['usage', 'list', ACCOUNT, '--model', 'gpt-4o-mini', '--gateway-url', 'http://127.0.0.1:1'], {
      BILLING_URL: baseUrl,
      ADMIN_TOKEN: TOKEN,
    });
    expect(only().path).toBe(`/admin/v1/accounts/${ACCOUNT}/usage?model=gpt-4o-mini`);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('cannot reach the gateway at http://127.0.0.1:1');
  });

  it('takes --url and --token over the environment', async () => {
    const result = await cli(['accounts', 'get', ACCOUNT, '--url', `${baseUrl}/`, '--token', TOKEN], {
      BILLING_URL: 'http://127.0.0.1:1',
      ADMIN_TOKEN: 'env-token-should-lose-0123',
      DATA_DIR: dataDir,
    });
    expect(result.code).toBe(0);
    expect(only().headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('defaults to 127.0.0.1:$BILLING_PORT and the trimmed token in $DATA_DIR/admin-token', async () => {
    await writeFile(path.join(dataDir, 'admin-token'), `  ${TOKEN}\n`);
    try {
      const result = await cli(['accounts', 'get', ACCOUNT], { BILLING_PORT: new URL(baseUrl).port, DATA_DIR: dataDir, ADMIN_TOKEN: '' });
      expect(result.code).toBe(0);
      expect(only().headers.authorization).toBe(`Bearer ${TOKEN}`);
    } finally {
      await rm(path.join(dataDir, 'admin-token'));
    }
  });

  it('exits 2 without a token anywhere, naming the token file', async () => {
    const result = await cli(['accounts', 'get', ACCOUNT], { BILLING_URL: baseUrl, DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(path.join(dataDir, 'admin-token'));
    expect(result.stderr).toContain('ADMIN_TOKEN');
    expect(requests).toHaveLength(0);
  });

  it('exits 2 with the usage text on bad usage, without calling the API', async () => {
    const result = await cli(['credits', 'add', ACCOUNT, 'lots']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('<credits> must be a number');
    expect(result.stderr).toContain('Usage:');
    expect(requests).toHaveLength(0);
  });

  it('answers a usage mistake with a one-line error and the help of that command only', async () => {
    const result = await cli(['credits', 'add', ACCOUNT, '5', '--force']);
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^error: .*Unknown option '--force'/);
    expect(lines[1]).toBe('');
    expect(result.stderr).toContain('credits add <accountId> --credits C');
    expect(result.stderr).not.toContain('usage summary');
    expect(lines.length).toBeLessThan(12);
  });

  it('prints one command\'s help for help <command>, with the default plan said', async () => {
    const result = await cli(['help', 'accounts', 'create'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('accounts create [--name N]');
    expect(result.stdout).toMatch(/--plan: default paid when the account opens with credits,\s+free when it opens empty/);
    expect(result.stdout).not.toContain('keys revoke');
  });

  it('prints the usage text on stdout for help', async () => {
    const result = await cli(['--help'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('credits add <accountId> <credits>');
    expect(result.stdout).toContain('accounts update <accountId>');
    expect(result.stdout).toContain('usage list <accountId>');
    expect(result.stdout).toContain('usage summary <accountId>');
    expect(result.stderr).toBe('');
  });

  it('explains a refused connection, naming the URL, and exits 1', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const result = await cli(['accounts', 'get', ACCOUNT], { BILLING_URL: deadUrl, ADMIN_TOKEN: TOKEN });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(deadUrl);
    expect(result.stderr).toContain('is the gateway running? start it with npm start');
  });

  it('exits 2 on an invalid URL', async () => {
    const result = await cli(['accounts', 'get', ACCOUNT, '--url', 'not a url'], { ADMIN_TOKEN: TOKEN });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid billing URL "not a url"');
  });
});
