import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDecimal, toScaledUnits, formatScaled } from '@igw/domain';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, eventually } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** The little of playwright-core's API this test drives (typed here so the repo type-checks without it). */
interface Locator {
  click(): Promise<void>;
  fill(value: string): Promise<void>;
  first(): Locator;
  nth(index: number): Locator;
  locator(selector: string): Locator;
  count(): Promise<number>;
  waitFor(options?: { state?: 'visible' | 'attached' | 'detached'; timeout?: number }): Promise<void>;
  textContent(): Promise<string | null>;
  inputValue(): Promise<string>;
  getAttribute(name: string): Promise<string | null>;
  selectOption(value: string): Promise<unknown>;
}
interface Cookie {
  name: string;
  value: string;
  httpOnly: boolean;
  sameSite: string;
  secure: boolean;
}
interface Route {
  request(): { method(): string; postData(): string | null; headers(): Record<string, string> };
  fetch(): Promise<{ json(): Promise<unknown> }>;
  fulfill(options: { status: number; contentType?: string; body: string }): Promise<void>;
  continue(): Promise<void>;
}
interface Page {
  goto(url: string): Promise<unknown>;
  route(url: string, handler: (route: Route) => Promise<void>): Promise<void>;
  url(): string;
  locator(selector: string): Locator;
  /** Runs the expression in the page (a string: the repo's types have no DOM). */
  evaluate<R>(expression: string): Promise<R>;
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
  on(event: 'dialog', listener: (dialog: { accept(): Promise<void> }) => void): void;
  on(event: 'request', listener: (request: { url(): string }) => void): void;
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
  context(): { cookies(): Promise<Cookie[]> };
}
interface Browser {
  newPage(options?: { viewport: { width: number; height: number } }): Promise<Page>;
  close(): Promise<void>;
}
interface PlaywrightCore {
  chromium: { launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<Browser> };
}

/** Debian's package (`apt-get install chromium`, done by .ci/run), or CHROMIUM_PATH. */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate): candidate is string => !!candidate && existsSync(candidate));
const SKIPPED = 'SKIPPED: no Chromium found; install Debian\'s "chromium" package as .ci/run does, or set CHROMIUM_PATH';
if (!CHROMIUM) process.stderr.write(`Admin console browser test ${SKIPPED}\n`);

/**
 * The README's console screenshots (docs/console) are refreshed with UPDATE_SCREENSHOTS=1; other
 * runs write theirs to a scratch folder, so a test run leaves the checkout as it was.
 */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../docs/console') : path.join(tmpdir(), `igw-console-screenshots-${process.pid}`);
const LAPTOP = { width: 1440, height: 900 };

function loadPlaywright(): PlaywrightCore {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('playwright-core') as PlaywrightCore;
}

/** Exact sum of decimal strings (USD has up to 12 places, credits 6). */
function sumDecimals(values: string[], scale: number): string {
  return formatScaled(
    values.reduce((total, value) => total + toScaledUnits(parseDecimal(value), scale), 0n),
    scale,
  );
}

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

(CHROMIUM ? describe : describe.skip)(CHROMIUM ? 'Admin console in a real browser' : `Admin console in a real browser (${SKIPPED})`, () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let browser: Browser;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness(emulatedProviders(emulator.url));
    browser = await loadPlaywright().chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    await mkdir(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await emulator?.close();
  });

  const chat = (key: string, model: string) =>
    call(`${app.gateway}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content: 'Say hello' }] } });

  it('signs in, creates an account and a key, shows paid requests in charts and ledger, revokes the key', async () => {
    const page = await browser.newPage({ viewport: LAPTOP });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content[- ]Security[- ]Policy/i.test(message.text())) problems.push(message.text());
    });
    const foreignRequests: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(app.billing)) foreignRequests.push(request.url());
    });
    page.on('dialog', (dialog) => void dialog.accept());

    // Sign in: the token goes to billing once and comes back as a cookie no script can read.
    await page.goto(`${app.billing}/console`);
    expect(page.url()).toBe(`${app.billing}/console/`);
    await page.locator('input[name="token"]').fill(app.adminToken);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'login.png') });
    await page.locator('button[type="submit"]').click();
    await page.locator('[data-testid="accounts-table"]').waitFor();
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'igw_console_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(session!.value).not.toContain(app.adminToken);
    expect(await page.evaluate('[document.cookie, JSON.stringify(localStorage), JSON.stringify(sessionStorage)]')).toEqual(['', '{}', '{}']);

    // An account, made in the console.
    const name = `Console team ${Date.now()}`;
    const createAccount = page.locator('[data-testid="create-account"]');
    await createAccount.locator('input[name="name"]').fill(name);
    await createAccount.locator('input[name="credits"]').fill('5000000');
    await createAccount.locator('button[type="submit"]').click();
    await page.locator(`h1:text-is("${name}")`).waitFor();
    const accountId = page.url().split('#/accounts/')[1]!;
    expect((await call<{ name: string; balance: number }>(`${app.billing}/admin/v1/accounts/${accountId}`, { token: app.adminToken })).body).toMatchObject({ name, balance: 5_000_000 });

    // A key, shown once with a copy button.
    const createKey = page.locator('[data-testid="create-key"]');
    await createKey.locator('input[name="name"]').fill('ci pipeline');
    await createKey.locator('button[type="submit"]').click();
    const keyField = page.locator('[data-testid="new-key-value"]');
    await keyField.waitFor();
    const key = await keyField.inputValue();
    expect(key.length).toBeGreaterThan(20);
    await page.locator('[data-testid="new-key"] button:text-is("Copy")').click();
    await page.locator('[data-testid="new-key"] button:text-is("Copied")').waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'account.png'), fullPage: true });
    await page.locator('[data-testid="new-key"] button:text-is("Done")').click();

    // Paid requests with it, through the gateway to the emulated upstream.
    const models = ['openai/gpt-4o-mini', 'openai/gpt-4o-mini', 'openai/gpt-4o'];
    for (const model of models) expect((await chat(key, model)).status).toBe(200);
    await eventually(async () => (await app.usageEntries(accountId, 10)).length === models.length, 20_000);
    const entries = await app.usageEntries(accountId, 10);

    // The usage page: both charts drawn, the ledger rows listed, the totals those of the summary API.
    await page.goto(`${app.billing}/console/#/usage/${accountId}`);
    const ledgerRows = page.locator('[data-testid="ledger-table"] tbody tr[data-kind="usage"]');
    await eventually(async () => (await ledgerRows.count()) === models.length, 10_000);
    await page.locator('[data-testid="chart-by-model"][data-series="2"]').waitFor();
    await page.locator('[data-testid="chart-by-key"][data-series="1"]').waitFor();
    const summary = (await call<Summary>(`${app.billing}/admin/v1/accounts/${accountId}/usage/summary`, { token: app.adminToken })).body;
    expect(summary.totals.requests).toBe(models.length);
    expect(summary.totals.usd).toBe(sumDecimals(entries.map((entry) => entry.usd), 12));
    expect(await page.locator('[data-testid="total-usd"]').getAttribute('data-value')).toBe(summary.totals.usd);
    expect(await page.locator('[data-testid="total-credits"]').getAttribute('data-value')).toBe(summary.totals.credits);
    expect(await page.locator('[data-testid="total-requests"]').textContent()).toBe(String(models.length));
    const shownUsd = await page.evaluate<string[]>(`[...document.querySelectorAll('[data-testid="ledger-table"] tr[data-kind="usage"] td[data-usd]')].map((cell) => cell.getAttribute('data-usd'))`);
    expect(shownUsd.sort()).toEqual(entries.map((entry) => entry.usd).sort());
    // The bars are on the canvases: pixels in the first series' colour (#2563eb) on each chart.
    for (const chart of ['chart-by-model', 'chart-by-key']) {
      const painted = await page.evaluate<number>(`(() => {
        const canvas = document.querySelector('[data-testid="${chart}"] canvas');
        const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
        let count = 0;
        for (let index = 0; index < data.length; index += 4) if (data[index] === 37 && data[index + 1] === 99 && data[index + 2] === 235) count += 1;
        return count;
      })()`);
      expect(painted).toBeGreaterThan(20);
    }
    await page.screenshot({ path: path.join(SCREENSHOTS, 'usage.png'), fullPage: true });
    // The model filter narrows chart, totals and ledger alike.
    await page.locator('select[aria-label="Model"]').selectOption('openai/gpt-4o');
    await eventually(async () => (await ledgerRows.count()) === 1, 10_000);
    await page.locator('[data-testid="total-requests"]:text-is("1")').waitFor();

    // Revoke in the console; the gateway refuses the key soon after.
    await page.goto(`${app.billing}/console/#/accounts/${accountId}`);
    const keyRow = page.locator('[data-testid="keys-table"] tbody tr[data-key-id]').first();
    await keyRow.locator('button:text-is("Revoke")').click();
    await keyRow.locator('.badge:text-is("revoked")').waitFor();
    await eventually(async () => (await chat(key, 'openai/gpt-4o-mini')).status === 401, 10_000);

    // The catalogue: "configured" is what the gateway itself can route.
    await page.goto(`${app.billing}/console/#/catalogue`);
    await page.locator('[data-testid="catalogue-table"] tbody tr').first().waitFor();
    const shown = await page.evaluate<Array<[string, string]>>(
      `[...document.querySelectorAll('[data-testid="catalogue-table"] tbody tr')].map((row) => [row.getAttribute('data-model'), row.getAttribute('data-configured')])`,
    );
    const available = (await call<{ data: Array<{ id: string }> }>(`${app.gateway}/v1/models?available=true`)).body.data.map((model) => model.id).sort();
    const all = (await call<{ data: Array<{ id: string }> }>(`${app.gateway}/v1/models`)).body.data.map((model) => model.id).sort();
    expect(shown.map(([id]) => id).sort()).toEqual(all);
    expect(shown.filter(([, configured]) => configured === 'true').map(([id]) => id).sort()).toEqual(available);
    expect(available.length).toBeGreaterThan(0);
    expect(available.length).toBeLessThan(all.length);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'catalogue.png') });

    // The account list, searched.
    await page.goto(`${app.billing}/console/#/accounts`);
    await page.locator('input[aria-label="Search accounts"]').fill(name.slice(0, 12));
    await page.locator(`[data-testid="accounts-table"] a:text-is("${name}")`).waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'accounts.png') });

    // Sign out: the session no longer opens the admin API, even replayed by hand.
    await page.locator('button:text-is("Sign out")').click();
    await page.locator('input[name="token"]').waitFor();
    const replayed = await call(`${app.billing}/admin/v1/accounts/${accountId}`, { headers: { cookie: `igw_console_session=${session!.value}` } });
    expect(replayed.status).toBe(401);

    expect(problems).toEqual([]);
    expect(foreignRequests).toEqual([]);
    for (const file of ['login.png', 'accounts.png', 'account.png', 'usage.png', 'catalogue.png']) expect((await stat(path.join(SCREENSHOTS, file))).size).toBeGreaterThan(10_000);
  }, 120_000);

  async function signedInPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: LAPTOP });
    await page.goto(`${app.billing}/console/`);
    await page.locator('input[name="token"]').fill(app.adminToken);
    await page.locator('button[type="submit"]').click();
    await page.locator('[data-testid="accounts-table"]').waitFor();
    return page;
  }

  it('edits a key\'s rules only as far as billing\'s KeyDto shows them', async () => {
    const { accountId, keyId } = await app.paidKey(1_000_000);
    const page = await signedInPage();
    page.on('dialog', (dialog) => void dialog.accept());

    // Without key rules in billing the form is the name alone, and saving says why it cannot.
    await page.goto(`${app.billing}/console/#/accounts/${accountId}`);
    const row = page.locator(`tr[data-key-id="${keyId}"]`);
    await row.locator('button:text-is("Edit")').click();
    const editor = page.locator('[data-testid="edit-key"]');
    await editor.waitFor();
    expect(await editor.locator('input').count()).toBe(1);
    expect(await page.locator('[data-testid="create-key"] input[name="budgetLimit"]').count()).toBe(0);
    await editor.locator('input[name="name"]').fill('renamed');
    await editor.locator('button[type="submit"]').click();
    await editor.locator('.error:has-text("cannot change keys yet")').waitFor();

    // With the agreed KeyDto shape (the key-rules fields; answered here by the page's own route
    // handler, as billing will once it has them), the form shows and sends exactly those fields.
    const sent: Array<{ method: string; body: unknown; header: string | undefined }> = [];
    await page.route(`**/admin/v1/accounts/${accountId}/keys`, async (route) => {
      if (route.request().method() !== 'GET') {
        sent.push({ method: route.request().method(), body: JSON.parse(route.request().postData() ?? 'null'), header: route.request().headers()['x-igw-console'] });
        return route.fulfill({ status: 201, contentType: 'application/json', body: JSON.stringify({ id: keyId, key: 'igw_shown_once', prefix: 'igw_shown', name: 'team key' }) });
      }
      const real = (await route.fetch().then((response) => response.json())) as { data: Array<Record<string, unknown>> };
      const withRules = real.data.map((key) => ({
        ...key,
        metadata: { team: 'ml' },
        budget: { limit: '25.00', unit: 'usd', period: 'month' },
        models: ['anthropic/*'],
        rpm: 60,
        concurrency: null,
        expiresAt: null,
        spend: { period: 'month', spent: '3.20', periodStart: '2026-11-01T00:00:00Z', resetsAt: '2026-12-01T00:00:00Z' },
      }));
      await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ ...real, data: withRules }) });
    });
    await page.route(`**/admin/v1/keys/${keyId}`, async (route) => {
      sent.push({ method: route.request().method(), body: JSON.parse(route.request().postData() ?? 'null'), header: route.request().headers()['x-igw-console'] });
      await route.fulfill({ status: 200, contentType: 'application/json', body: '{}' });
    });
    await page.goto(`${app.billing}/console/#/accounts`);
    await page.goto(`${app.billing}/console/#/accounts/${accountId}`);
    await row.locator('td:has-text("3.20 of 25.00 usd / month · models: anthropic/* · 60 rpm · team=ml")').waitFor();
    await row.locator('button:text-is("Edit")').click();
    await editor.waitFor();
    expect(await editor.locator('input[name="budgetLimit"]').inputValue()).toBe('25.00');
    expect(await editor.locator('input[name="models"]').inputValue()).toBe('anthropic/*');
    expect(await editor.locator('input[name="rpm"]').inputValue()).toBe('60');
    expect(await editor.locator('input[name="concurrency"]').inputValue()).toBe('');
    await editor.locator('input[name="budgetLimit"]').fill('30');
    await editor.locator('input[name="models"]').fill('');
    await editor.locator('input[name="concurrency"]').fill('2');
    await editor.locator('input[name="expiresAt"]').fill('2027-01-31T12:30');
    await editor.locator('button[type="submit"]').click();
    await editor.waitFor({ state: 'detached' });
    expect(sent).toEqual([
      {
        method: 'PATCH',
        header: '1',
        body: {
          metadata: { team: 'ml' },
          budget: { limit: '30', unit: 'usd', period: 'month' },
          models: null,
          rpm: 60,
          concurrency: 2,
          expiresAt: '2027-01-31T12:30:00.000Z',
        },
      },
    ]);

    // A new key's form offers the rules too, and leaves unset ones out of the request.
    const create = page.locator('[data-testid="create-key"]');
    await create.locator('input[name="name"]').fill('team key');
    await create.locator('input[name="budgetLimit"]').fill('5');
    await create.locator('select[name="budgetPeriod"]').selectOption('day');
    await create.locator('input[name="models"]').fill('openai/gpt-4o-mini, anthropic/*');
    await create.locator('button[type="submit"]').click();
    await page.locator('[data-testid="new-key-value"]').waitFor();
    expect(sent[1]).toEqual({
      method: 'POST',
      header: '1',
      body: { name: 'team key', budget: { limit: '5', unit: 'usd', period: 'day' }, models: ['openai/gpt-4o-mini', 'anthropic/*'] },
    });
  }, 60_000);
});
