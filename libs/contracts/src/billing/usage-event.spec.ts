import { USAGE_EVENT_SCHEMA, usageEventShapeProblem, type UsageEvent } from './usage-event';

const event: UsageEvent = {
  requestId: 'req-1',
  accountId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  keyId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  model: 'openai/gpt-4o-mini',
  endpoint: 'chat.completions',
  units: { input_tokens: 12, output_tokens: 30 },
  creditsMicro: '36',
  usd: '0.000018',
  catalogueRevision: 3,
  prices: [
    { unit: 'input_tokens', price: 0.15, per: 1_000_000 },
    { unit: 'input_tokens', price: 0.3, per: 1_000_000, promptTokensAbove: 200_000 },
  ],
  occurredAt: '2026-11-28T00:00:00.000Z',
};

describe('the usage event schema', () => {
  it('takes an event as the gateway makes it, with or without its optional fields', () => {
    expect(usageEventShapeProblem(event)).toBeUndefined();
    expect(usageEventShapeProblem({ ...event, deployment: 'azure-eastus/gpt-4o-prod', clientRequestId: 'client-7' })).toBeUndefined();
  });

  it('names the first missing required field, and only those are required', () => {
    for (const [field, schema] of Object.entries(USAGE_EVENT_SCHEMA)) {
      const without: Record<string, unknown> = { ...event };
      delete without[field];
      if (schema.optional) expect(usageEventShapeProblem(without)).toBeUndefined();
      else expect(usageEventShapeProblem(without)).toMatch(new RegExp(`^${field} is not `));
    }
  });

  it('words each problem with the path of the field', () => {
    expect(usageEventShapeProblem('{}')).toBe('not an object');
    expect(usageEventShapeProblem({ ...event, keyId: 'key-1' })).toBe('keyId is not a UUID');
    expect(usageEventShapeProblem({ ...event, units: { input_tokens: 1.5 } })).toBe('units.input_tokens is not an integer from 0 to 1000000000');
    expect(usageEventShapeProblem({ ...event, prices: [event.prices[0], { ...event.prices[1], per: 0 }] })).toBe('prices[1].per is not a positive integer');
    expect(usageEventShapeProblem({ ...event, prices: ['input_tokens'] })).toBe('prices[0].unit is not a non-empty string');
    expect(usageEventShapeProblem({ ...event, occurredAt: 'yesterday' })).toBe('occurredAt is not a time');
    expect(usageEventShapeProblem({ ...event, deployment: null })).toBe('deployment is not a string of at most 200 characters');
  });

  it('takes the client request id as sent: the ledger keeps it only when well formed', () => {
    expect(usageEventShapeProblem({ ...event, clientRequestId: 42 })).toBeUndefined();
  });
});
