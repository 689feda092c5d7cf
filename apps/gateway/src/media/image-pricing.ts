import type { CatalogueModel } from '@igw/contracts';
import { priceUsage } from '@igw/domain';

type Pricing = NonNullable<CatalogueModel['pricing']>;
type PriceUnits = Pricing['units'];

/** What a price is chosen by: the request's (or the answer's) values of the catalogue's dimensions. */
export interface ImagePriceKey {
  size?: string;
  quality?: string;
}

/** One image's cost in micro-credits under a unit list, to compare variants. */
function costOfOneImage(units: PriceUnits): bigint {
  return priceUsage({ units }, { images: 1, steps: 1, megapixels: 1 }, 1_000_000).creditsMicro;
}

function dearest(lists: readonly PriceUnits[]): PriceUnits {
  return lists.reduce((best, units) => (costOfOneImage(units) > costOfOneImage(best) ? units : best));
}

/**
 * The units an image request is priced with (catalogue rule: a request that matches a variant
 * is charged that variant's units, the top-level units when none matches). A dimension the key
 * leaves open (no size asked) matches every variant, and the dearest of those is taken: never
 * less than what the upstream may produce. A key that matches no variant at all (a size the
 * price list does not name) gets the dearest of the variants and the top-level units.
 */
export function imagePriceUnits(pricing: Pricing | undefined, key: ImagePriceKey): PriceUnits {
  if (!pricing) return [];
  const variants = pricing.variants ?? [];
  if (variants.length === 0) return pricing.units;
  const matching = variants.filter((variant) =>
    Object.entries(variant.dimensions).every(([dimension, value]) => {
      const wanted = (key as Record<string, string | undefined>)[dimension];
      return wanted === undefined || wanted === value;
    }),
  );
  if (matching.length > 0) return dearest(matching.map((variant) => variant.units));
  return dearest([pricing.units, ...variants.map((variant) => variant.units)]);
}

/**
 * The quality to ask for when the client names none, so that what is billed is what is made:
 * `auto` when the model's prices list it (GPT Image's own default), else the first quality
 * they list (DALL·E 3: standard, its default); undefined when prices do not vary by quality.
 */
export function defaultQuality(pricing: Pricing | undefined): string | undefined {
  const qualities = (pricing?.variants ?? []).map((variant) => variant.dimensions.quality).filter((quality): quality is string => quality !== undefined);
  if (qualities.length === 0) return undefined;
  return qualities.includes('auto') ? 'auto' : qualities[0];
}

/** Whichever costs less per image: a settled price never exceeds the held one. */
export function cheaperOf(settled: PriceUnits, held: PriceUnits): PriceUnits {
  return costOfOneImage(settled) <= costOfOneImage(held) ? settled : held;
}

/** The metered units of an image request: images, and steps and megapixels when its price names them. */
export function imageUnits(units: PriceUnits, counts: { images: number; steps?: number; megapixels?: number }): Record<string, number> {
  const priced = new Set(units.map((unit) => unit.unit));
  const metered: Record<string, number> = { images: counts.images };
  if (priced.has('steps') && counts.steps !== undefined) metered.steps = counts.steps;
  // Per-megapixel prices are per whole megapixel (unit counts are integers): rounded up.
  if (priced.has('megapixels') && counts.megapixels !== undefined) metered.megapixels = Math.ceil(counts.megapixels - 1e-9);
  return metered;
}
