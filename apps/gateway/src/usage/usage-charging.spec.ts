import type { AuthenticatedKey, CatalogueModel, UsageEvent } from '@igw/contracts';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import type { PaidCall } from '../paid-requests/admitted-request';
import { UsageCharging } from './usage-charging';
import type { UsageRecorder } from './usage-recorder.service';

const model = {
  id: 'test/mini',
  pricing: {
    kind: 'fixed',
    currency: 'USD',
    units: [
      { unit: 'input_tokens', price: 1, per: 1_000_000 },
      { unit: 'output_tokens', price: 4, per: 1_000_000 },
    ],
  },
} as CatalogueModel;
const auth = { keyId: 'k1', accountId: 'a1' } as AuthenticatedKey;

function chargingWith(recorded: UsageEvent[], environment: NodeJS.ProcessEnv = {}) {
  const settings = { env: loadEnvironment(environment).env } as ServiceSettings;
  return new UsageCharging({ record: (event: UsageEvent) => recorded.push(event) } as unknown as UsageRecorder, settings);
}

describe('UsageCharging: prices what a request used and records it for the ledger', () => {
  it('prices the units at the prices of the request start, records the event, and returns meta.usage and the exact credits', () => {
    const recorded: UsageEvent[] = [];
    const call: PaidCall = {
      requestId: 'r1',
      auth,
      endpoint: 'chat.completions',
      model,
      catalogueRevision: 7,
      context: { clientRequestId: 'client-1' } as PaidCall['context'],
      deployment: 'azure-eastus/gpt-4o-prod',
    };
    const charge = chargingWith(recorded, { CREDITS_PER_USD: '100' }).charge(call, { input_tokens: 1_000, output_tokens: 500 });
    // 1,000 × $1/M + 500 × $4/M = $0.003, at 100 credits per USD.
    expect(charge).toEqual({ usage: { credits_used: 0.3, usd_spent: 0.003 }, creditsMicro: 300_000n });
    expect(recorded).toEqual([
      {
        requestId: 'r1',
        accountId: 'a1',
        keyId: 'k1',
        model: 'test/mini',
        endpoint: 'chat.completions',
        units: { input_tokens: 1_000, output_tokens: 500 },
        creditsMicro: '300000',
        usd: expect.any(String),
        catalogueRevision: 7,
        prices: model.pricing!.units,
        occurredAt: expect.any(String),
        clientRequestId: 'client-1',
        deployment: 'azure-eastus/gpt-4o-prod',
      },
    ]);
    expect(Number(recorded[0].usd)).toBe(0.003);
  });

  it('leaves the client request id and the deployment out of the event when the client sent none and no upstream took the call', () => {
    const recorded: UsageEvent[] = [];
    chargingWith(recorded).charge({ requestId: 'r2', auth, endpoint: 'embeddings', model, catalogueRevision: 1 }, { input_tokens: 10 });
    const journalled = JSON.parse(JSON.stringify(recorded[0])) as Record<string, unknown>;
    expect(journalled).not.toHaveProperty('clientRequestId');
    expect(journalled).not.toHaveProperty('deployment');
  });
});
