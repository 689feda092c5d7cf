import type { CatalogueModel, ModelPricing, PriceUnit } from '@igw/contracts';
import { formatScaled, parseDecimal } from '@igw/domain';

/** Entries are replaced, never changed, when the catalogue changes: each is priced for hits once. */
const hitPriced = new WeakMap<CatalogueModel, CatalogueModel>();

/**
 * The entry as a cache hit is charged: each price times the model's `responseCache.hitPriceShare`
 * (default 0, a free hit), multiplied exactly, so the ledger's check of the charge against the
 * prices it is sent holds to the micro-credit.
 */
export function hitPricedModel(model: CatalogueModel): CatalogueModel {
  let priced = hitPriced.get(model);
  if (!priced) {
    const share = model.responseCache?.hitPriceShare ?? 0;
    priced = model.pricing ? { ...model, pricing: sharedPricing(model.pricing, share) } : model;
    hitPriced.set(model, priced);
  }
  return priced;
}

function sharedPricing(pricing: ModelPricing, share: number): ModelPricing {
  const units = (list: PriceUnit[]) => list.map((price) => ({ ...price, price: exactProduct(price.price, share) }));
  return { ...pricing, units: units(pricing.units), ...(pricing.variants ? { variants: pricing.variants.map((variant) => ({ ...variant, units: units(variant.units) })) } : {}) };
}

function exactProduct(price: number, share: number): number {
  const a = parseDecimal(price);
  const b = parseDecimal(share);
  // At most a price's digits and a share's six decimals: well within a double's exact range.
  return Number(formatScaled(a.units * b.units, a.scale + b.scale));
}

/** Whether the catalogue lets the model's answers be cached. */
export function modelAllowsCache(model: CatalogueModel): boolean {
  return model.responseCache?.allowed !== false;
}
