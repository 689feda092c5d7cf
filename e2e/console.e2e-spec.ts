import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConnectionsReport } from '@igw/messaging/connections-report';
import { parseDecimal, toScaledUnits, formatScaled } from '@igw/domain';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { browsersRequired, browsersUnderTest, type PlaywrightLaunchers } from './support/browsers';
import { call } from './support/http';
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
interface Page {
  goto(url: string): Promise<unknown>;
  url(): string;
  locator(selector: string): Locator;
  /** Runs the expression in the page (a string: the repo's types have no DOM). */
  evaluate<R>(expression: string): Promise<R>;
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
  on(event: 'dialog', listener: (dialog: { accept(): Promise<void> }) => void): void;
  on(event: 'request', listener: (request: { url(): string; method(): string; postData(): string | null }) => void): void;
  on(event: 'response', listener: (response: { url(): string; status(): number; request(): { method(): string } }) => void): void;
  waitForTimeout(milliseconds: number): Promise<void>;
  route(url: string, handler: (route: { continue(): Promise<void> }) => Promise<void>): Promise<void>;
  screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown>;
  context(): { cookies(): Promise<Cookie[]> };
}
interface Browser {
  newPage(options?: { viewport: { width: number; height: number }; timezoneId?: string }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * The README's console screenshots (docs/console, Chromium's) are refreshed with UPDATE_SCREENSHOTS=1;
 * other runs, and Firefox's always, go to a scratch folder, so a test run leaves the checkout as it was.
 */
const screenshotsOf = (browserName: string): string =>
  process.env.UPDATE_SCREENSHOTS === '1' && browserName === 'chromium'
    ? path.resolve(__dirname, '../docs/console')
    : path.join(tmpdir(), `igw-console-screenshots-${process.pid}`, browserName);
const LAPTOP = { width: 1440, height: 900 };

function loadPlaywright(): PlaywrightLaunchers<Browser> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('playwright-core') as PlaywrightLaunchers<Browser>;
}

/** Each browser runs the same tests; one that is missing is skipped with a reason, or fails under REQUIRE_BROWSERS=1. */
const browsers = browsersUnderTest<Browser>();
for (const { name, executable, missing } of browsers) if (!executable) process.stderr.write(`Admin console browser test in ${name} ${browsersRequired ? 'FAILS' : 'SKIPPED'}: ${missing}\n`);
const runnable = browsers.filter((candidate) => candidate.executable || browsersRequired);
const skipped = browsers.filter((candidate) => !candidate.executable && !browsersRequired);

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

/** billing's KeyDto, as GET /admin/v1/keys/:id answers. */
interface KeyDto {
  id: string;
  name: string | null;
  accountId: string;
  metadata: Record<string, string>;
  budget: { limit: string; unit: 'usd' | 'credits'; period: 'day' | 'month' | 'lifetime' } | null;
  models: string[] | null;
  rpm: number | null;
  concurrency: number | null;
  expiresAt: string | null;
  spend: { period: string; spent: string; periodStart: string; resetsAt: string | null } | null;
}

/** An instant on a whole minute as the console shows it: UTC, "2026-12-01 00:00Z". */
const utcMinute = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)}Z`;

for (const { name, missing } of skipped) describe.skip(`Admin console in ${name} (SKIPPED: ${missing})`, () => it('is not run here', () => undefined));

// (Jest refuses describe.each over no browsers, even skipped.)
if (runnable.length) describe('Admin console in a real browser', () => {
  // One gateway stack for every browser: each test makes its own account.
  let emulator: RunningEmulator;
  let app: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness(emulatedProviders(emulator.url));
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const chat = (key: string, model: string) =>
    call(`${app.gateway}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content: 'Say hello' }] } });

  describe.each(runnable)('in $name', (underTest) => {
    const SCREENSHOTS = screenshotsOf(underTest.name);
    let browser: Browser;

    beforeAll(async () => {
      if (!underTest.executable) throw new Error(`REQUIRE_BROWSERS=1 and ${underTest.missing}`);
      browser = await underTest.launch(loadPlaywright());
      await mkdir(SCREENSHOTS, { recursive: true });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
    });

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
      await createKey.locator('input[name="budgetLimit"]').fill('5');
      await createKey.locator('input[name="models"]').fill('openai/*');
      await createKey.locator('textarea[name="metadata"]').fill('owner=ci@example.com');
      await createKey.locator('button[type="submit"]').click();
      const keyField = page.locator('[data-testid="new-key-value"]');
      await keyField.waitFor();
      const key = await keyField.inputValue();
      expect(key.length).toBeGreaterThan(20);
      await page.locator('[data-testid="new-key"] button:text-is("Copy")').click();
      await page.locator('[data-testid="new-key"] button:text-is("Copied")').waitFor();
      const keyId = (await page.locator('[data-testid="new-key"]').getAttribute('data-key-id'))!;
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

      // The account page shows the key's rules and what it spent this month, as billing counts it.
      await page.goto(`${app.billing}/console/#/accounts/${accountId}`);
      const keyRow = page.locator(`[data-testid="keys-table"] tbody tr[data-key-id="${keyId}"]`);
      const spent = (await call<KeyDto>(`${app.billing}/admin/v1/keys/${keyId}`, { token: app.adminToken })).body.spend!.spent;
      expect(spent).toBe(sumDecimals(entries.map((entry) => entry.usd), 12));
      await keyRow.locator(`[data-testid="key-budget"][data-spent="${spent}"]`).waitFor();
      await keyRow.locator('[data-testid="key-rules"]:text-is("models: openai/* · owner=ci@example.com")').waitFor();
      await page.screenshot({ path: path.join(SCREENSHOTS, 'account.png'), fullPage: true });

      // Revoke in the console; the gateway refuses the key soon after.
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

    async function signedInPage(timezoneId?: string): Promise<Page> {
      const page = await browser.newPage({ viewport: LAPTOP, timezoneId });
      await page.goto(`${app.billing}/console/`);
      await page.locator('input[name="token"]').fill(app.adminToken);
      await page.locator('button[type="submit"]').click();
      await page.locator('[data-testid="accounts-table"]').waitFor();
      return page;
    }

    // Signing out while pages still load or wait to (a debounced search, the catalogue's broadcast
    // question, the usage page's summaries) must leave nothing behind: no request leaves after the
    // click but the logout itself, and none comes back 401 for the browser to log. The network is
    // made slow, as a user's can be: every console request, the logout too, is held a while on its
    // way, so one started before the click reaches billing after the session ended, and a timer has
    // time to fire while the logout travels (on loopback both windows last a few milliseconds, and
    // only a loaded machine hit them). Each round signs out at another moment of a page's loading;
    // CONSOLE_SIGN_OUT_ROUNDS=20 runs the loop.
    it('signs out at any moment of a page loading without a request left behind or a 401 logged', async () => {
      const { accountId } = await app.paidKey(1_000);
      const page = await signedInPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('response', (response) => {
        if (response.status() === 401) problems.push(`401 for ${response.request().method()} ${response.url()}`);
      });
      // The moment of the click and the requests started after it, as the page itself times them
      // (the test's own clock would count the time Playwright takes to deliver the click).
      await page.evaluate(`document.addEventListener('click', (event) => {
        if (event.target.closest('button')?.textContent === 'Sign out') window.signedOutAt = performance.now();
      }, true)`);
      const requestsAfterSignOut = () =>
        page.evaluate<string[]>(
          `performance.getEntriesByType('resource').filter((entry) => entry.startTime >= window.signedOutAt && !entry.name.endsWith('/console/api/logout')).map((entry) => entry.name)`,
        );
      let requestDelay = 0;
      const slowly = (milliseconds: () => number) => async (route: { continue(): Promise<void> }) => {
        await new Promise((resolve) => setTimeout(resolve, milliseconds()));
        // A request the page aborted meanwhile cannot be continued.
        await route.continue().catch(() => undefined);
      };
      await page.route('**/admin/v1/**', slowly(() => requestDelay));
      await page.route('**/console/api/catalogue', slowly(() => requestDelay));
      await page.route('**/console/api/logout', slowly(() => 300));
      const rounds = Number(process.env.CONSOLE_SIGN_OUT_ROUNDS ?? 6);
      const pages: Array<{ name: string; open: () => Promise<void> }> = [
        {
          name: 'accounts, a search typed',
          open: async () => {
            await page.goto(`${app.billing}/console/#/accounts`);
            await page.locator('input[aria-label="Search accounts"]').fill(`round ${Date.now()}`);
          },
        },
        { name: 'usage', open: async () => void (await page.goto(`${app.billing}/console/#/usage/${accountId}`)) },
        { name: 'catalogue', open: async () => void (await page.goto(`${app.billing}/console/#/catalogue`)) },
        { name: 'account', open: async () => void (await page.goto(`${app.billing}/console/#/accounts/${accountId}`)) },
        // It asks again every 5 s: no refresh may leave once signed out.
        { name: 'connections', open: async () => void (await page.goto(`${app.billing}/console/#/connections`)) },
      ];
      for (let round = 0; round < rounds; round++) {
        const shown = pages[round % pages.length];
        if (round > 0) {
          requestDelay = 0;
          await page.locator('input[name="token"]').fill(app.adminToken);
          await page.locator('button[type="submit"]').click();
          await page.locator('button:text-is("Sign out")').waitFor();
        }
        await page.evaluate('performance.clearResourceTimings()');
        requestDelay = 50 + ((round * 113) % 400);
        await shown.open();
        // From at once to past the search's 250 ms debounce.
        await page.waitForTimeout((round * 71) % 320);
        await page.locator('button:text-is("Sign out")').click();
        await page.locator('input[name="token"]').waitFor();
        // Long enough for any timer or held request the page still had to fire or arrive.
        await page.waitForTimeout(700);
        expect({ round, page: shown.name, problems, afterSignOut: await requestsAfterSignOut() }).toEqual({ round, page: shown.name, problems: [], afterSignOut: [] });
      }
    }, 180_000);

    it("shows the gateway's connections and deployments as billing's admin API reports them, refreshed while the page is visible and not while hidden", async () => {
      const { key } = await app.paidKey(1_000_000);
      // A call through the built-in openai connection (OPENAI_API_KEY and OPENAI_BASE_URL), so one of its deployments has served.
      expect((await chat(key, 'openai/gpt-4o-mini')).status).toBe(200);
      const page = await signedInPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || /Content[- ]Security[- ]Policy/i.test(message.text())) problems.push(message.text());
      });
      const asks: number[] = [];
      page.on('request', (request) => {
        if (request.url() === `${app.billing}/admin/v1/connections`) asks.push(Date.now());
      });
      const report = async () => {
        const answer = await call<ConnectionsReport>(`${app.billing}/admin/v1/connections`, { token: app.adminToken });
        expect(answer.status).toBe(200);
        return answer.body;
      };

      await page.goto(`${app.billing}/console/#/connections`);
      const openai = page.locator('[data-testid="connection"][data-connection="openai"]');
      await openai.locator('[data-testid="deployments-table"] tbody tr[data-deployment]').first().waitFor({ timeout: 10_000 });
      const first = await report();
      const connection = first.connections.find((candidate) => candidate.name === 'openai')!;
      expect(connection).toMatchObject({ name: 'openai', kind: 'openai', origin: 'environment' });
      expect(connection.baseUrl.startsWith(emulator.url)).toBe(true);
      expect(connection.deployments.length).toBeGreaterThan(0);
      expect(connection.deployments.map((deployment) => deployment.deployment)).toContain('openai/gpt-4o-mini');

      // One card per connection, one row per deployment, each as the report has it.
      const cards = await page.evaluate<string[]>(`[...document.querySelectorAll('[data-testid="connection"]')].map((card) => card.getAttribute('data-connection'))`);
      expect(cards).toEqual(first.connections.map((candidate) => candidate.name));
      const rows = await page.evaluate<Array<[string, string]>>(
        `[...document.querySelectorAll('[data-connection="openai"] [data-testid="deployments-table"] tbody tr[data-deployment]')].map((row) => [row.getAttribute('data-deployment'), row.getAttribute('data-state')])`,
      );
      expect(rows.map(([deployment]) => deployment)).toEqual(connection.deployments.map((deployment) => deployment.deployment));
      expect(await openai.locator('[data-testid="connection-base-url"]').textContent()).toBe(connection.baseUrl);
      expect(await openai.locator('[data-testid="connection-headers"]').textContent()).toBe(connection.headers.length ? connection.headers.join(', ') : 'none');
      const mini = openai.locator('tr[data-deployment="openai/gpt-4o-mini"]');
      // Counters move between two reads: the page's and the API's agree once both are read after the same refresh.
      await eventually(async () => {
        const expected = (await report()).connections.find((candidate) => candidate.name === 'openai')!.deployments.find((deployment) => deployment.deployment === 'openai/gpt-4o-mini')!;
        const shown = await mini.locator('[data-testid="deployment-requests"]').getAttribute('data-used');
        return shown === String(expected.requestsThisMinute) && (await mini.getAttribute('data-state')) === expected.state;
      }, 15_000, 500);
      const providersFile = page.locator('[data-testid="providers-file"]');
      expect(await providersFile.getAttribute('data-state')).toBe(first.providersFile === null ? 'none' : first.providersFile.error ? 'error' : 'loaded');
      await page.screenshot({ path: path.join(SCREENSHOTS, 'connections.png') });

      // No secret anywhere: neither in the admin API's answer nor on the page.
      const secrets = Object.entries(emulatedProviders(emulator.url))
        .filter(([name]) => name.endsWith('_API_KEY'))
        .map(([, value]) => value!);
      const html = await page.evaluate<string>('document.documentElement.outerHTML');
      const answerText = JSON.stringify(await report());
      for (const secret of secrets) expect([secret, html.includes(secret), answerText.includes(secret)]).toEqual([secret, false, false]);

      // Asked again every 5 s while shown...
      const shownAsks = asks.length;
      await eventually(async () => asks.length >= shownAsks + 1, 8_000, 100);
      const gap = asks.at(-1)! - asks.at(-2)!;
      expect(gap).toBeGreaterThanOrEqual(4_500);
      // ...never while the tab is hidden, and at once when it is shown again.
      await page.evaluate(`(() => {
        window.hiddenTab = true;
        Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (window.hiddenTab ? 'hidden' : 'visible') });
        document.dispatchEvent(new Event('visibilitychange'));
      })()`);
      const hiddenAt = asks.length;
      await page.waitForTimeout(6_500);
      expect(asks.length).toBe(hiddenAt);
      const shownAt = Date.now();
      await page.evaluate(`(() => {
        window.hiddenTab = false;
        document.dispatchEvent(new Event('visibilitychange'));
      })()`);
      await eventually(async () => asks.length === hiddenAt + 1, 2_000, 50);
      expect(asks.at(-1)! - shownAt).toBeLessThan(1_500);

      expect(problems).toEqual([]);
      expect((await stat(path.join(SCREENSHOTS, 'connections.png'))).size).toBeGreaterThan(10_000);
    }, 90_000);

    it("creates and edits a key's rules in the console, shows billing's refusals and the key's spend, and the gateway enforces what was saved", async () => {
      const { accountId } = await app.paidKey(5_000_000);
      // A browser far from UTC: the expiry typed and the resets shown are UTC all the same.
      const page = await signedInPage('Pacific/Auckland');
      const patchesOnTheWire: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'PATCH') patchesOnTheWire.push(request.url());
      });

      // Created with a daily budget, one model and a label.
      await page.goto(`${app.billing}/console/#/accounts/${accountId}`);
      // The body of each PATCH, read as the console hands it to fetch: Playwright's WebDriver BiDi client
      // (Firefox) reports no request bodies. The requests seen on the wire are counted against these.
      await page.evaluate(`(() => {
        const send = window.fetch;
        window.patchBodies = [];
        window.fetch = (input, init) => {
          if (init && init.method === 'PATCH') window.patchBodies.push(JSON.parse(init.body));
          return send(input, init);
        };
      })()`);
      const sentPatches = async () => {
        const bodies = await page.evaluate<unknown[]>('window.patchBodies');
        expect(patchesOnTheWire).toHaveLength(bodies.length);
        return bodies;
      };
      const create = page.locator('[data-testid="create-key"]');
      await create.locator('input[name="name"]').fill('team key');
      await create.locator('input[name="budgetLimit"]').fill('5');
      await create.locator('select[name="budgetPeriod"]').selectOption('day');
      await create.locator('input[name="models"]').fill('openai/gpt-4o-mini');
      await create.locator('textarea[name="metadata"]').fill('team=ml');
      await create.locator('button[type="submit"]').click();
      const notice = page.locator('[data-testid="new-key"]');
      await notice.locator('[data-testid="new-key-value"]').waitFor();
      const key = await notice.locator('[data-testid="new-key-value"]').inputValue();
      const keyId = (await notice.getAttribute('data-key-id'))!;
      const getKey = async () => (await call<KeyDto>(`${app.billing}/admin/v1/keys/${keyId}`, { token: app.adminToken })).body;
      const created = await getKey();
      expect(created).toMatchObject({
        name: 'team key',
        accountId,
        metadata: { team: 'ml' },
        budget: { limit: '5', unit: 'usd', period: 'day' },
        models: ['openai/gpt-4o-mini'],
        rpm: null,
        concurrency: null,
        expiresAt: null,
        spend: { period: 'day' },
      });
      const row = page.locator(`tr[data-key-id="${keyId}"]`);
      await row.locator(`[data-testid="key-budget"]:text-is("${created.spend!.spent} of 5 USD / day · resets ${utcMinute(created.spend!.resetsAt!)}")`).waitFor();
      await row.locator('[data-testid="key-rules"]:text-is("models: openai/gpt-4o-mini · team=ml")').waitFor();

      // Billing's own validation messages show in the form, which stays open to fix them.
      await row.locator('button:text-is("Edit")').click();
      const editor = page.locator('[data-testid="edit-key"]');
      const refusal = editor.locator('.error');
      await editor.locator('input[name="rpm"]').fill('0');
      await editor.locator('button[type="submit"]').click();
      await refusal.waitFor();
      const rpmRefused = await call<{ message: string }>(`${app.billing}/admin/v1/keys/${keyId}`, { method: 'PATCH', token: app.adminToken, body: { rpm: 0 } });
      expect(rpmRefused.status).toBe(400);
      expect(await refusal.textContent()).toBe(rpmRefused.body.message);
      await editor.locator('input[name="rpm"]').fill('600');
      await editor.locator('input[name="budgetLimit"]').fill('10.1234567');
      await editor.locator('button[type="submit"]').click();
      const limitRefused = await call<{ message: string }>(`${app.billing}/admin/v1/keys/${keyId}`, {
        method: 'PATCH',
        token: app.adminToken,
        body: { budget: { limit: '10.1234567', unit: 'usd', period: 'day' }, rpm: 600 },
      });
      expect(limitRefused.status).toBe(400);
      await editor.locator(`.error:text-is("${limitRefused.body.message.replace(/"/g, '\\"')}")`).waitFor();
      expect(limitRefused.body.message).toContain('budget');

      // Saved: only the fields changed are sent, and billing stores exactly them.
      await editor.locator('input[name="budgetLimit"]').fill('10');
      await editor.locator('select[name="budgetPeriod"]').selectOption('month');
      await editor.locator('input[name="expiresAt"]').fill('2099-01-31T12:30');
      await editor.locator('textarea[name="metadata"]').fill('team=ml\nowner=ana@example.com');
      await editor.locator('button[type="submit"]').click();
      await editor.waitFor({ state: 'detached' });
      expect(await sentPatches()).toEqual([
        { rpm: 0 },
        { budget: { limit: '10.1234567', unit: 'usd', period: 'day' }, rpm: 600 },
        { budget: { limit: '10', unit: 'usd', period: 'month' }, rpm: 600, expiresAt: '2099-01-31T12:30:00Z', metadata: { team: 'ml', owner: 'ana@example.com' } },
      ]);
      const edited = await getKey();
      expect(edited).toMatchObject({
        name: 'team key',
        metadata: { team: 'ml', owner: 'ana@example.com' },
        budget: { limit: '10', unit: 'usd', period: 'month' },
        models: ['openai/gpt-4o-mini'],
        rpm: 600,
        concurrency: null,
        expiresAt: '2099-01-31T12:30:00.000Z',
        spend: { period: 'month' },
      });
      const labels = Object.entries(edited.metadata).map(([name, value]) => `${name}=${value}`).join(', ');
      await row.locator(`[data-testid="key-rules"]:text-is("models: openai/gpt-4o-mini · 600 rpm · expires 2099-01-31 12:30Z · ${labels}")`).waitFor();
      await row.locator('button:text-is("Edit")').click();
      expect(await editor.locator('input[name="expiresAt"]').inputValue()).toBe('2099-01-31T12:30');
      expect(await editor.locator('input[name="budgetLimit"]').inputValue()).toBe('10');

      // The gateway refuses a model outside the allowlist, naming the rule...
      expect((await chat(key, 'openai/gpt-4o-mini')).status).toBe(200);
      const outside = await chat(key, 'openai/gpt-4o');
      expect(outside.status).toBe(403);
      expect((outside.body as { message: string }).message).toBe("Forbidden: this API key may not call model 'openai/gpt-4o' (the key's model rule allows: openai/gpt-4o-mini).");

      // ...and lets it through once the console widens the allowlist.
      await editor.locator('input[name="models"]').fill('openai/gpt-4o-mini, openai/gpt-4o');
      await editor.locator('button[type="submit"]').click();
      await editor.waitFor({ state: 'detached' });
      expect((await sentPatches()).at(-1)).toEqual({ models: ['openai/gpt-4o-mini', 'openai/gpt-4o'] });
      expect((await getKey()).models).toEqual(['openai/gpt-4o-mini', 'openai/gpt-4o']);
      await eventually(async () => (await chat(key, 'openai/gpt-4o')).status === 200, 10_000, 200);

      // The spend the console shows is the key's spend in billing, which is the sum of its ledger rows.
      const keyEntries = async () =>
        (await call<{ data: Array<{ keyId: string | null; usd: string }> }>(`${app.billing}/admin/v1/accounts/${accountId}/usage?kind=usage&limit=50`, { token: app.adminToken })).body.data.filter(
          (entry) => entry.keyId === keyId,
        );
      await eventually(async () => (await keyEntries()).length === 2, 20_000);
      const ledgerUsd = sumDecimals((await keyEntries()).map((entry) => entry.usd), 12);
      await eventually(async () => (await getKey()).spend!.spent === ledgerUsd, 20_000);
      const { spend } = await getKey();
      expect(toScaledUnits(parseDecimal(spend!.spent), 12)).toBeGreaterThan(0n);
      await page.goto(`${app.billing}/console/#/accounts`);
      await page.goto(`${app.billing}/console/#/accounts/${accountId}`);
      const budget = row.locator(`[data-testid="key-budget"][data-spent="${spend!.spent}"]`);
      await budget.waitFor();
      expect(await budget.textContent()).toBe(`${spend!.spent} of 10 USD / month · resets ${utcMinute(spend!.resetsAt!)}`);
    }, 90_000);
  });
});
