import { billableSeconds } from './transcription.service';

describe('seconds of audio billed', () => {
  it('rounds a started second up, bills at least one and never more than was held', () => {
    expect(billableSeconds(2, 600)).toBe(2);
    expect(billableSeconds(2.0000000001, 600)).toBe(2);
    expect(billableSeconds(2.01, 600)).toBe(3);
    expect(billableSeconds(0.2, 600)).toBe(1);
    expect(billableSeconds(0, 600)).toBe(1);
    expect(billableSeconds(Number.NaN, 600)).toBe(1);
    expect(billableSeconds(7_200, 600)).toBe(600);
  });
});
