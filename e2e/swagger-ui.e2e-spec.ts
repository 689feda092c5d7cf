import { existsSync } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** The little of playwright-core's API this test drives (typed here so the repo type-checks without it). */
interface Locator {
  click(): Promise<void>;
  fill(value: string): Promise<void>;
  first(): Locator;
  locator(selector: string): Locator;
  count(): Promise<number>;
  waitFor(options?: { state?: 'visible' | 'attached'; timeout?: number }): Promise<void>;
  textContent(): Promise<string | null>;
  screenshot(options: { path: string }): Promise<unknown>;
}
interface Page {
  goto(url: string): Promise<unknown>;
  locator(selector: string): Locator;
  setViewportSize(size: { width: number; height: number }): Promise<void>;
}
interface Browser {
  newPage(): Promise<Page>;
  close(): Promise<void>;
}
interface PlaywrightCore {
  chromium: { launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<Browser> };
}

/** Debian's package (`apt-get install chromium`, done by .ci/run), or CHROMIUM_PATH. */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate): candidate is string => !!candidate && existsSync(candidate));

const SKIPPED = 'SKIPPED: no Chromium found; install Debian\'s "chromium" package as .ci/run does, or set CHROMIUM_PATH';
if (!CHROMIUM) process.stderr.write(`Swagger UI browser test ${SKIPPED}\n`);

function loadPlaywright(): PlaywrightCore {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('playwright-core') as PlaywrightCore;
  } catch (error) {
    throw new Error('playwright-core is not installed: it is a devDependency of the repo (npm ci installs it).', { cause: error });
  }
}

/**
 * What a newcomer does first: open the gateway's Swagger UI, Authorize with an API key, and
 * run the chat operation's default example. It must answer 200, in the page itself.
 */
(CHROMIUM ? describe : describe.skip)(CHROMIUM ? 'Swagger UI in a real browser' : `Swagger UI in a real browser (${SKIPPED})`, () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let browser: Browser;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness(emulatedProviders(emulator.url));
    ({ key } = await app.paidKey(1_000_000));
    browser = await loadPlaywright().chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await emulator?.close();
  });

  it('authorizes with an API key and runs the default chat example to a 200', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 1400 });
    await page.goto(`${app.gateway}/docs`);

    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    const schemesOffered = await dialog.locator('.auth-container').count();
    const apiKeyScheme = dialog.locator('.auth-container').first();
    await apiKeyScheme.locator('input').first().fill(key);
    await apiKeyScheme.locator('button.authorize').click();
    await dialog.locator('button.btn-done').first().click();

    const chat = page.locator('.opblock-post:has(.opblock-summary-path[data-path="/v1/chat/completions"])').first();
    await chat.locator('.opblock-summary').first().click();
    await chat.locator('button.try-out__btn').click();
    await chat.locator('button.execute').click();

    const status = chat.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ state: 'visible', timeout: 30_000 });
    const body = chat.locator('.live-responses-table .response-col_description pre').first();

    // Left in place on purpose, for a look at what the newcomer sees.
    const screenshots = await mkdtemp(path.join(tmpdir(), 'igw-swagger-ui-'));
    const screenshot = path.join(screenshots, 'chat-try-it-out.png');
    // The chat operation only: its request, the curl line with the key, and the live 200.
    await chat.screenshot({ path: screenshot });
    process.stderr.write(`Swagger UI screenshot: ${screenshot}\n`);

    expect((await status.textContent())?.trim()).toBe('200');
    expect(await body.textContent()).toContain('"object": "chat.completion"');
    // The gateway takes API keys only: the admin token's scheme is not offered.
    expect(schemesOffered).toBe(1);
    expect((await stat(screenshot)).size).toBeGreaterThan(10_000);
  });
});
