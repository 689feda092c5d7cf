import { randomUUID } from 'node:crypto';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

interface SummaryRow {
  day: string;
  hour?: string;
  model?: string | null;
  keyId?: string | null;
  requests: number;
  credits: string;
  usd: string;
}
interface Summary {
  data: SummaryRow[];
  totals: { requests: number; credits: string; usd: string };
}

/**
 * The console's credentials and the admin endpoints it reads, attacked over plain HTTP: the
 * session cookie, its CSRF rules, the login form, the account list and the usage summary.
 */
describe('Admin console: sessions, account list, usage summary by key and hour', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let origin: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness(emulatedProviders(emulator.url));
    origin = app.billing;
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const consoleHeaders = { 'x-igw-console': '1', origin: '' };
  async function login(): Promise<string> {
    const response = await fetch(`${app.billing}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-igw-console': '1', origin },
      body: JSON.stringify({ token: app.adminToken }),
    });
    expect(response.status).toBe(204);
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^igw_console_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    return cookie.split(';')[0]!;
  }

  it('serves the page with a strict CSP and its bundle from billing itself', async () => {
    const redirect = await fetch(`${app.billing}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('console/');
    const page = await fetch(`${app.billing}/console/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:|\*|unsafe/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    expect(html).not.toMatch(/<script>|style=|https?:\/\//);
    const script = await fetch(`${app.billing}/console/assets/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await script.text()).length).toBeGreaterThan(50_000);
    for (const name of ['../../main.js', '..%2F..%2Fmain.js', 'app.js.LEGAL.txt', '.bundle-key', 'constructor']) {
      expect((await fetch(`${app.billing}/console/assets/${name}`)).status).toBe(404);
    }
  });

  it('trades the admin token for a session cookie the admin API accepts, and refuses everything else', async () => {
    // The login form needs the console header (another site's form cannot send it) and the right token.
    expect((await call(`${app.billing}/console/api/login`, { body: { token: app.adminToken } })).status).toBe(403);
    expect((await call(`${app.billing}/console/api/login`, { body: { token: app.adminToken }, headers: { 'x-igw-console': '1', origin: 'https://evil.example' } })).status).toBe(403);
    // A wrong token typed into the form is told which token is meant and where to find it, not to send a Bearer header.
    const wrongToken = await call<{ error: { code: string } }>(`${app.billing}/console/api/login`, { body: { token: 'x'.repeat(40) }, headers: { 'x-igw-console': '1' } });
    expectErrorBody(wrongToken, 401, '/console/api/login', /^Unauthorized: that is not the admin token\. .*\.data\/admin-token/);
    expect(wrongToken.body.error.code).toBe('invalid_admin_token');
    expect((await call(`${app.billing}/console/api/login`, { body: { token: 12 }, headers: { 'x-igw-console': '1' } })).status).toBe(400);
    expect((await call(`${app.billing}/console/api/login`, { body: { token: 'y'.repeat(5000) }, headers: { 'x-igw-console': '1' } })).status).toBe(400);

    const cookie = await login();
    expect((await call<{ authenticated: boolean }>(`${app.billing}/console/api/session`, { headers: { cookie } })).body.authenticated).toBe(true);
    // Reads need only the session.
    const accounts = await call<{ data: unknown[] }>(`${app.billing}/admin/v1/accounts`, { headers: { cookie } });
    expect(accounts.status).toBe(200);
    // Writes need the console header, and a same-origin Origin when one is sent.
    expect((await call(`${app.billing}/admin/v1/accounts`, { body: { name: 'csrf' }, headers: { cookie } })).status).toBe(403);
    expect((await call(`${app.billing}/admin/v1/accounts`, { body: { name: 'csrf' }, headers: { cookie, 'x-igw-console': '1', origin: 'http://evil.example' } })).status).toBe(403);
    expect((await call(`${app.billing}/admin/v1/accounts`, { body: { name: 'csrf' }, headers: { cookie, 'x-igw-console': '0' } })).status).toBe(403);
    const created = await call<{ id: string }>(`${app.billing}/admin/v1/accounts`, { body: { name: 'from the console' }, headers: { cookie, 'x-igw-console': '1', origin } });
    expect(created.status).toBe(201);
    // The header alone is not a credential.
    expect((await call(`${app.billing}/admin/v1/accounts`, { body: { name: 'x' }, headers: consoleHeaders })).status).toBe(401);
    // A tampered, truncated or foreign cookie opens nothing.
    const [name, value] = cookie.split('=') as [string, string];
    const [payload, signature] = value.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ sid: 'x', exp: Date.now() + 1e9 })).toString('base64url');
    for (const bad of [`${payload}.${signature.slice(0, -2)}AA`, `${forged}.${signature}`, payload, `${value}.x`, 'a'.repeat(600), '']) {
      expect((await call(`${app.billing}/admin/v1/accounts`, { headers: { cookie: `${name}=${bad}` } })).status).toBe(401);
    }
    // A wrong admin token header is refused even beside a good cookie.
    expect((await call(`${app.billing}/admin/v1/accounts`, { headers: { cookie, authorization: 'Bearer wrong-token-wrong-token' } })).status).toBe(401);
    // The catalogue endpoint is the admin API's too.
    expect((await call(`${app.billing}/console/api/catalogue`)).status).toBe(401);
    expect((await call(`${app.billing}/console/api/catalogue`, { headers: { cookie } })).status).toBe(200);

    // Logout needs the console header too, then the session is dead on this billing.
    expect((await call(`${app.billing}/console/api/logout`, { method: 'POST', headers: { cookie } })).status).toBe(403);
    const out = await call(`${app.billing}/console/api/logout`, { method: 'POST', headers: { cookie, 'x-igw-console': '1' } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^igw_console_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
    expect((await call(`${app.billing}/admin/v1/accounts`, { headers: { cookie } })).status).toBe(401);
  });

  it('marks the cookie Secure behind an https proxy', async () => {
    const response = await fetch(`${app.billing}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-igw-console': '1', 'x-forwarded-proto': 'https', origin: origin.replace('http:', 'https:') },
      body: JSON.stringify({ token: app.adminToken }),
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('set-cookie')).toMatch(/; Secure; Max-Age=28800$/);
  });

  it('lists accounts newest first, searched and paged, and refuses bad parameters', async () => {
    const tag = `list-${randomUUID().slice(0, 8)}`;
    const made: string[] = [];
    for (const suffix of ['a', 'b', 'c_d', 'e%f']) {
      made.push((await call<{ id: string }>(`${app.billing}/admin/v1/accounts`, { token: app.adminToken, body: { name: `${tag} ${suffix}`, plan: 'paid' } })).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const answer: { status: number; body: { data: Array<{ id: string; name: string }>; nextCursor: string | null } } = await call(
        `${app.billing}/admin/v1/accounts?search=${encodeURIComponent(tag)}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        { token: app.adminToken },
      );
      expect(answer.status).toBe(200);
      seen.push(...answer.body.data.map((account) => account.id));
      cursor = answer.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([...made].reverse());
    // LIKE's wildcards are plain characters in a search.
    const literal = await call<{ data: Array<{ name: string }> }>(`${app.billing}/admin/v1/accounts?search=${encodeURIComponent(`${tag} e%`)}`, { token: app.adminToken });
    expect(literal.body.data.map((account) => account.name)).toEqual([`${tag} e%f`]);
    const underscore = await call<{ data: Array<{ name: string }> }>(`${app.billing}/admin/v1/accounts?search=${encodeURIComponent(`${tag} c_`)}`, { token: app.adminToken });
    expect(underscore.body.data.map((account) => account.name)).toEqual([`${tag} c_d`]);
    const byId = await call<{ data: Array<{ id: string }> }>(`${app.billing}/admin/v1/accounts?search=${made[1]!.toUpperCase()}`, { token: app.adminToken });
    expect(byId.body.data.map((account) => account.id)).toEqual([made[1]]);
    const suspended = await call<{ data: unknown[] }>(`${app.billing}/admin/v1/accounts?search=${tag}&status=suspended`, { token: app.adminToken });
    expect(suspended.body.data).toEqual([]);
    for (const bad of ['limit=0', 'limit=201', 'limit=abc', 'limit=1e20', 'limit=-1', 'status=gone', 'plan=gold', 'cursor=abc', `cursor=${Buffer.from('["x","y"]').toString('base64url')}`, `search=${'s'.repeat(201)}`]) {
      expectErrorBody(await call(`${app.billing}/admin/v1/accounts?${bad}`, { token: app.adminToken }), 400, '/admin/v1/accounts');
    }
    expect((await call(`${app.billing}/admin/v1/accounts`)).status).toBe(401);
  });

  it('sums usage by key and by hour exactly as the ledger has it', async () => {
    const { accountId, key: firstKey, keyId: firstKeyId } = await app.paidKey(5_000_000);
    const second = await call<{ id: string; key: string }>(`${app.billing}/admin/v1/accounts/${accountId}/keys`, { token: app.adminToken, body: { name: 'second' } });
    const chat = (key: string, model: string) => call(`${app.gateway}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
    const sent: Array<[string, string]> = [
      [firstKey, 'openai/gpt-4o-mini'],
      [firstKey, 'openai/gpt-4o'],
      [second.body.key, 'openai/gpt-4o-mini'],
      [second.body.key, 'openai/gpt-4o-mini'],
    ];
    for (const [key, model] of sent) expect((await chat(key, model)).status).toBe(200);
    await eventually(async () => (await app.usageEntries(accountId, 10)).length === sent.length, 20_000);
    const base = `${app.billing}/admin/v1/accounts/${accountId}/usage/summary`;
    const get = async (parameters: string) => (await call<Summary>(`${base}?${parameters}`, { token: app.adminToken })).body;

    const byModel = await get('');
    const byKey = await get('groupBy=key');
    const both = await get('groupBy=model,key&granularity=hour');
    const none = await get('groupBy=');
    for (const summary of [byKey, both, none]) expect(summary.totals).toEqual(byModel.totals);
    expect(byModel.totals.requests).toBe(sent.length);
    expect(byKey.data.every((row) => !('model' in row) && typeof row.keyId === 'string' && !('hour' in row))).toBe(true);
    const requestsByKey = Object.fromEntries(byKey.data.map((row) => [row.keyId, row.requests]));
    expect(requestsByKey).toEqual({ [firstKeyId]: 2, [second.body.id]: 2 });
    expect(both.data.every((row) => /^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/.test(row.hour!) && row.hour!.startsWith(row.day))).toBe(true);
    expect(both.data.reduce((total, row) => total + row.requests, 0)).toBe(sent.length);
    expect(new Set(both.data.map((row) => `${row.hour} ${row.model} ${row.keyId}`)).size).toBe(both.data.length);
    expect(none.data.every((row) => !('model' in row) && !('keyId' in row))).toBe(true);
    // The filters of the listing apply to the summary too.
    const secondOnly = await get(`groupBy=model&key=${second.body.id}`);
    expect(secondOnly.totals.requests).toBe(2);
    expect(secondOnly.data.map((row) => row.model)).toEqual(['openai/gpt-4o-mini']);
    expect((await get('model=openai/gpt-4o')).totals.requests).toBe(1);
    expect((await get(`key=${randomUUID()}`)).totals.requests).toBe(0);

    for (const bad of ['groupBy=team', 'groupBy=model,key,model', 'granularity=week', 'granularity=', 'key=not-a-uuid', 'groupBy=model&groupBy=key&groupBy=key&groupBy=model']) {
      expectErrorBody(await call(`${base}?${bad}`, { token: app.adminToken }), 400, `/admin/v1/accounts/${accountId}/usage/summary`);
    }
    expectErrorBody(await call(`${base}?groupBy=${'model,'.repeat(2000)}`, { token: app.adminToken }), 400, `/admin/v1/accounts/${accountId}/usage/summary`);
    // Other accounts' ids, made up by the hundred: each a 404, never another account's data.
    const strangers = await Promise.all(
      Array.from({ length: 100 }, () => call(`${app.billing}/admin/v1/accounts/${randomUUID()}/usage/summary?groupBy=key&granularity=hour`, { token: app.adminToken })),
    );
    expect(strangers.map((response) => response.status)).toEqual(Array(100).fill(404));
  });
});
