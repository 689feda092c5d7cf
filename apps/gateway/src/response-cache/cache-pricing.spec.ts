import type { CatalogueModel } from '@igw/contracts';
import { priceUsage } from '@igw/domain';
import { hitPricedModel, modelAllowsCache } from './cache-pricing';

const model = (responseCache?: CatalogueModel['responseCache']): CatalogueModel => ({
  id: 'openai/gpt-4o-mini',
  aliases: [],
  type: 'chat',
  info: { name: 'GPT-4o mini', developer: 'OpenAI', description: '' },
  tags: [],
  pricing: {
    kind: 'fixed',
    currency: 'USD',
    units: [
      { unit: 'input_tokens', price: 0.15, per: 1_000_000 },
      { unit: 'output_tokens', price: 0.6, per: 1_000_000 },
    ],
    dimensions: ['service_tier'],
    variants: [{ dimensions: { service_tier: 'flex' }, units: [{ unit: 'input_tokens', price: 0.075, per: 1_000_000 }] }],
  },
  routing: { sources: [{ provider: 'openai', model: 'gpt-4o-mini' }] },
  ...(responseCache ? { responseCache } : {}),
});

describe('hitPricedModel', () => {
  it('makes a hit free by default', () => {
    const priced = hitPricedModel(model());
    expect(priced.pricing!.units.map((unit) => unit.price)).toEqual([0, 0]);
    expect(priceUsage(priced.pricing, { input_tokens: 1_000, output_tokens: 500 }, 1_000).creditsMicro).toBe(0n);
  });

  it('charges the share of every price exactly, variants included, and is made once per entry', () => {
    const entry = model({ hitPriceShare: 0.1 });
    const priced = hitPricedModel(entry);
    expect(priced.pricing!.units.map((unit) => unit.price)).toEqual([0.015, 0.06]);
    expect(priced.pricing!.variants![0].units[0].price).toBe(0.0075);
    expect(hitPricedModel(entry)).toBe(priced);
    const full = priceUsage(entry.pricing, { input_tokens: 1_000_000, output_tokens: 1_000_000 }, 1_000).creditsMicro;
    expect(priceUsage(priced.pricing, { input_tokens: 1_000_000, output_tokens: 1_000_000 }, 1_000).creditsMicro * 10n).toBe(full);
  });

  it('tells whether the catalogue allows caching the model', () => {
    expect(modelAllowsCache(model())).toBe(true);
    expect(modelAllowsCache(model({ allowed: false }))).toBe(false);
  });
});
