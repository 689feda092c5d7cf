import path from 'node:path';
import { ErrorMessages } from '@igw/contracts';
import { creditsToMicro } from '@igw/domain';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { fireMixedLoad, spendUntilRefused } from './support/billing-load';
import { call } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const REQUESTS = 2000;
const CONCURRENCY = 40;

/**
 * The standalone app (`npm start`) under the same mixed load as the distributed setup: the
 * ledger, the responses' meta.usage and the balance agree to the micro-credit, and a small
 * balance is never overspent by more than one request's hold. (Billing restarts and
 * redelivered events are exercised against the distributed setup, where billing runs alone.)
 */
describe('standalone billing stays exact under concurrent load', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      RATE_LIMIT_RPM: '1000000',
      RATE_LIMIT_CONCURRENCY: '1000',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const account = (id: string) => call<{ balance: number }>(`${app.billing}/admin/v1/accounts/${id}`, { token: app.adminToken });
  const usageTotals = async (id: string) =>
    (await call<{ totals: { requests: number; credits: number } }>(`${app.billing}/admin/v1/accounts/${id}/usage/summary`, { token: app.adminToken })).body.totals;

  it('bills chat, streamed chat and embeddings exactly once, to the micro-credit', async () => {
    const openingCredits = 1_000_000;
    const { accountId, key } = await app.paidKey(openingCredits);
    const load = await fireMixedLoad({ gateways: [app.gateway], key, requests: REQUESTS, concurrency: CONCURRENCY });
    expect(load.failures).toEqual([]);
    expect(load.answered).toBe(REQUESTS);

    await eventually(async () => (await usageTotals(accountId)).requests === REQUESTS, 60_000, 200);
    const totals = await usageTotals(accountId);
    expect(creditsToMicro(String(totals.credits))).toBe(load.spentMicro);
    await eventually(async () => creditsToMicro(String(openingCredits)) - creditsToMicro(String((await account(accountId)).body.balance)) === load.spentMicro, 10_000);
    const report = await call<{ mismatches: unknown[]; usageMismatches: unknown[]; keyMismatches: unknown[] }>(`${app.billing}/admin/v1/reconciliation`, { token: app.adminToken });
    expect(report.body).toMatchObject({ mismatches: [], usageMismatches: [], keyMismatches: [] });
  }, 240_000);

  it('never lets concurrent requests overspend a small balance', async () => {
    const openingCredits = 300;
    const { accountId, key } = await app.paidKey(openingCredits);
    // The test catalogue's prices at 2,000,000 credits per USD.
    const outcome = await spendUntilRefused({ gateways: [app.gateway], key, prices: { inputCredits: 0.3, outputCredits: 1.2 }, burst: 60, maxBursts: 8 });
    expect(outcome.admitted).toBeGreaterThan(0);
    expect([...outcome.refusals.keys()]).toEqual([`403 ${ErrorMessages.creditsExhausted}`]);
    await eventually(async () => (await usageTotals(accountId)).requests === outcome.admitted, 20_000);
    const balanceMicro = creditsToMicro(String((await account(accountId)).body.balance));
    expect(creditsToMicro(String(openingCredits)) - balanceMicro).toBe(outcome.spentMicro);
    // A hold is taken only when it fits: never overspent, and refused only once less than one request's ceiling was left.
    expect(outcome.spentMicro).toBeLessThanOrEqual(creditsToMicro(String(openingCredits)));
    expect(outcome.spentMicro).toBeGreaterThan(creditsToMicro(String(openingCredits)) - outcome.ceilingMicro);
  }, 120_000);
});
