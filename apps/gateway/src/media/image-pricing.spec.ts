import type { CatalogueModel } from '@igw/contracts';
import { cheaperOf, defaultQuality, imagePriceUnits, imageUnits } from './image-pricing';

const images = (price: number) => [{ unit: 'images', price, per: 1 }];
const pricing: NonNullable<CatalogueModel['pricing']> = {
  kind: 'fixed',
  currency: 'USD',
  units: images(0.5),
  dimensions: ['size', 'quality'],
  variants: [
    { dimensions: { size: '1024x1024', quality: 'standard' }, units: images(0.04) },
    { dimensions: { size: '1024x1024', quality: 'hd' }, units: images(0.08) },
    { dimensions: { size: '1792x1024', quality: 'standard' }, units: images(0.08) },
    { dimensions: { size: '1792x1024', quality: 'hd' }, units: images(0.12) },
  ],
};

describe('image pricing', () => {
  it('takes the variant the request names', () => {
    expect(imagePriceUnits(pricing, { size: '1024x1024', quality: 'hd' })).toEqual(images(0.08));
  });

  it('takes the dearest variant a dimension left open may give', () => {
    expect(imagePriceUnits(pricing, { quality: 'standard' })).toEqual(images(0.08));
    expect(imagePriceUnits(pricing, { size: '1024x1024' })).toEqual(images(0.08));
    expect(imagePriceUnits(pricing, {})).toEqual(images(0.12));
  });

  it('takes the dearest of everything for a key no variant matches, and the top-level units without variants', () => {
    expect(imagePriceUnits(pricing, { size: '512x512', quality: 'standard' })).toEqual(images(0.5));
    expect(imagePriceUnits({ ...pricing, variants: undefined }, { size: '1024x1024' })).toEqual(images(0.5));
    expect(imagePriceUnits(undefined, {})).toEqual([]);
  });

  it("defaults the quality to auto when priced, else to the first listed, else none", () => {
    expect(defaultQuality(pricing)).toBe('standard');
    expect(defaultQuality({ ...pricing, variants: [...pricing.variants!, { dimensions: { size: '1024x1024', quality: 'auto' }, units: images(1) }] })).toBe('auto');
    expect(defaultQuality({ ...pricing, variants: undefined })).toBeUndefined();
  });

  it('never settles dearer than it held', () => {
    expect(cheaperOf(images(0.12), images(0.08))).toEqual(images(0.08));
    expect(cheaperOf(images(0.04), images(0.08))).toEqual(images(0.04));
  });

  it('meters steps and whole megapixels only where the price names them', () => {
    expect(imageUnits(images(1), { images: 2, steps: 40, megapixels: 2.1 })).toEqual({ images: 2 });
    const perStepAndMegapixel = [...images(1), { unit: 'steps', price: 0.001, per: 1 }, { unit: 'megapixels', price: 0.01, per: 1 }];
    expect(imageUnits(perStepAndMegapixel, { images: 2, steps: 40, megapixels: 2.097152 })).toEqual({ images: 2, steps: 40, megapixels: 3 });
    expect(imageUnits(perStepAndMegapixel, { images: 1, megapixels: 1 })).toEqual({ images: 1, megapixels: 1 });
  });
});
