import type { UsageEvent } from '@igw/contracts';
import { priceUsage } from '@igw/domain';
import { usageEventProblem } from './usage-event-validation';

const CREDITS_PER_USD = 2_000_000;
const NOW = Date.parse('2026-11-28T00:00:00Z');

/** An event as a gateway makes it: its charge is its units at its own prices. */
function eventOf(units: Record<string, number>, prices: UsageEvent['prices']): UsageEvent {
  const priced = priceUsage({ units: prices }, units, CREDITS_PER_USD);
  return {
    requestId: 'req-1',
    accountId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    keyId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    model: 'google/gemini-2.5-pro',
    endpoint: 'chat.completions',
    units,
    creditsMicro: priced.creditsMicro.toString(),
    usd: priced.usd,
    catalogueRevision: 3,
    prices,
    occurredAt: new Date(NOW).toISOString(),
  };
}

const banded: UsageEvent['prices'] = [
  { unit: 'input_tokens', price: 1.25, per: 1_000_000 },
  { unit: 'input_tokens', price: 2.5, per: 1_000_000, promptTokensAbove: 200_000 },
  { unit: 'output_tokens', price: 10, per: 1_000_000 },
  { unit: 'output_tokens', price: 15, per: 1_000_000, promptTokensAbove: 200_000 },
];

describe('usageEventProblem: prices for longer prompts', () => {
  it('accepts an event charged at the prices of its prompt size, and one-hour cache writes', () => {
    expect(usageEventProblem(eventOf({ input_tokens: 250_000, output_tokens: 100 }, banded), CREDITS_PER_USD, NOW)).toBeUndefined();
    expect(usageEventProblem(eventOf({ input_tokens: 1_000, output_tokens: 100 }, banded), CREDITS_PER_USD, NOW)).toBeUndefined();
    const caching = [
      { unit: 'input_tokens', price: 1, per: 1_000_000 },
      { unit: 'cache_write_1h_input_tokens', price: 2, per: 1_000_000 },
    ];
    expect(usageEventProblem(eventOf({ input_tokens: 10, cache_write_1h_input_tokens: 2_000 }, caching), CREDITS_PER_USD, NOW)).toBeUndefined();
  });

  it('refuses an event charged at the shorter prompt\'s prices for a longer prompt', () => {
    const event = { ...eventOf({ input_tokens: 250_000, output_tokens: 100 }, banded.filter((price) => price.promptTokensAbove === undefined)), prices: banded };
    expect(usageEventProblem(event, CREDITS_PER_USD, NOW)).toMatch(/^creditsMicro \d+ does not match its units at its prices/);
  });

  it('refuses a price list that prices a unit twice at one prompt size, or a threshold that is no whole number', () => {
    const twice = [...banded, { unit: 'output_tokens', price: 20, per: 1_000_000, promptTokensAbove: 200_000 }];
    expect(usageEventProblem(eventOf({ input_tokens: 1 }, twice), CREDITS_PER_USD, NOW)).toBe('prices[4] prices output_tokens a second time');
    const fractional = [{ unit: 'input_tokens', price: 1, per: 1_000_000 }, { unit: 'input_tokens', price: 2, per: 1_000_000, promptTokensAbove: 0.5 }];
    expect(usageEventProblem(eventOf({ input_tokens: 1 }, fractional), CREDITS_PER_USD, NOW)).toBe('prices[1].promptTokensAbove is not a positive integer');
  });
});

describe('usageEventProblem: the deployment that served the request', () => {
  const event = eventOf({ input_tokens: 10 }, [{ unit: 'input_tokens', price: 1, per: 1_000_000 }]);

  it('accepts an event naming its deployment, and one without (journalled before gateways recorded it)', () => {
    expect(usageEventProblem({ ...event, deployment: 'azure-eastus/gpt-4o-prod' }, CREDITS_PER_USD, NOW)).toBeUndefined();
    expect(usageEventProblem({ ...event, deployment: 'a'.repeat(200) }, CREDITS_PER_USD, NOW)).toBeUndefined();
    expect('deployment' in event).toBe(false);
    expect(usageEventProblem(event, CREDITS_PER_USD, NOW)).toBeUndefined();
  });

  it('refuses a deployment that is no string, or longer than 200 characters', () => {
    for (const deployment of [42, null, ['azure-eastus/gpt-4o'], { name: 'azure-eastus/gpt-4o' }, 'a'.repeat(201)]) {
      expect(usageEventProblem({ ...event, deployment }, CREDITS_PER_USD, NOW)).toBe('deployment is not a string of at most 200 characters');
    }
  });
});

describe('usageEventProblem: the response cache', () => {
  const full = [
    { unit: 'input_tokens', price: 1.25, per: 1_000_000 },
    { unit: 'output_tokens', price: 10, per: 1_000_000 },
  ];
  /** The model's prices times a hit's share, as the gateway lists a hit's prices. */
  const atShare = (share: number) => full.map((price) => ({ ...price, price: Number((price.price * share).toFixed(12)) }));
  const units = { input_tokens: 1_234, output_tokens: 567 };

  it('accepts a hit charged at the cache prices (a share of the full ones, or free), with what it saved', () => {
    for (const share of [0.1, 0.333333, 0]) {
      const hit = eventOf(units, atShare(share));
      const fullUsd = priceUsage({ units: full }, units, CREDITS_PER_USD).usd;
      expect(usageEventProblem({ ...hit, cache: 'hit', cacheSavedUsd: '0.0066' }, CREDITS_PER_USD, NOW)).toBeUndefined();
      expect(fullUsd).not.toBe(hit.usd);
    }
    expect(usageEventProblem({ ...eventOf(units, full), cache: 'miss' }, CREDITS_PER_USD, NOW)).toBeUndefined();
  });

  it("refuses a hit whose charge is not its units at its own (cache) prices: charged at the full prices but listing the cache's", () => {
    const charged = eventOf(units, full);
    expect(usageEventProblem({ ...charged, prices: atShare(0.1), cache: 'hit', cacheSavedUsd: '0' }, CREDITS_PER_USD, NOW)).toMatch(/^creditsMicro \d+ does not match its units at its prices/);
  });

  it('refuses a cache mark other than hit or miss, and a saving that is no decimal string', () => {
    const event = eventOf(units, full);
    expect(usageEventProblem({ ...event, cache: 'stale' }, CREDITS_PER_USD, NOW)).toMatch(/^cache /);
    expect(usageEventProblem({ ...event, cache: 'hit', cacheSavedUsd: 0.5 }, CREDITS_PER_USD, NOW)).toMatch(/^cacheSavedUsd /);
    expect(usageEventProblem({ ...event, cache: 'hit', cacheSavedUsd: '-1' }, CREDITS_PER_USD, NOW)).toMatch(/^cacheSavedUsd /);
  });
});
