import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The browsers the console's test drives, each through playwright-core: Debian's Chromium over
 * CDP and Debian's Firefox ESR over WebDriver BiDi (playwright-core's "moz-firefox" channel; stock
 * Firefox does not speak Playwright's Juggler protocol). .ci/run installs both packages.
 */
export interface BrowserUnderTest<B> {
  /** "chromium" or "firefox": names the describe block and the screenshot folder. */
  name: 'chromium' | 'firefox';
  /** The executable found, or undefined (the suite is then skipped, or failed under REQUIRE_BROWSERS=1). */
  executable: string | undefined;
  /** Why the suite cannot run here, for the skip message. */
  missing: string;
  launch(playwright: PlaywrightLaunchers<B>): Promise<B>;
}

/** The little of playwright-core's launchers used here (typed here so the repo type-checks without it). */
export interface PlaywrightLaunchers<B> {
  chromium: { launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<B> };
  firefox: { launch(options: { executablePath: string; headless: boolean; channel: string; firefoxUserPrefs: Record<string, string | number | boolean> }): Promise<B> };
}

const firstExisting = (...candidates: Array<string | undefined>) => candidates.find((candidate): candidate is string => !!candidate && existsSync(candidate));

const chromiumPath = firstExisting(process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser');
const firefoxPath = firstExisting(process.env.FIREFOX_ESR_PATH, '/usr/bin/firefox-esr');

/** Starts Firefox ESR behind a relay that fills the one BiDi command it lacks (see the file). */
const FIREFOX_LAUNCHER = path.join(__dirname, 'firefox-esr-bidi.cjs');

export function browsersUnderTest<B>(): Array<BrowserUnderTest<B>> {
  return [
    {
      name: 'chromium',
      executable: chromiumPath,
      missing: 'no Chromium found; install Debian\'s "chromium" package as .ci/run does, or set CHROMIUM_PATH',
      launch: (playwright) => playwright.chromium.launch({ executablePath: chromiumPath!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] }),
    },
    {
      name: 'firefox',
      executable: firefoxPath,
      missing: 'no Firefox ESR found; install Debian\'s "firefox-esr" package as .ci/run does, or set FIREFOX_ESR_PATH',
      launch: (playwright) =>
        playwright.firefox.launch({
          channel: 'moz-firefox',
          executablePath: FIREFOX_LAUNCHER,
          headless: true,
          // The light colour scheme, pinned by Firefox itself: the relay answers Playwright's colour-scheme command on its strength.
          firefoxUserPrefs: { 'layout.css.prefers-color-scheme.content-override': 1 },
        }),
    },
  ];
}

/** Under REQUIRE_BROWSERS=1 (set by .ci/run) a missing browser fails its suite instead of skipping it. */
export const browsersRequired = process.env.REQUIRE_BROWSERS === '1';
