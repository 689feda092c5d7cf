import { audioSeconds, billableSeconds } from './transcription.service';

describe('seconds of audio billed', () => {
  it('rounds a started second up and bills at least one, with no cap: the hold decides admission, never the price', () => {
    expect(billableSeconds(2)).toBe(2);
    expect(billableSeconds(2.0000000001)).toBe(2);
    expect(billableSeconds(2.01)).toBe(3);
    expect(billableSeconds(0.2)).toBe(1);
    expect(billableSeconds(0)).toBe(1);
    expect(billableSeconds(Number.NaN)).toBe(1);
    expect(billableSeconds(7_200)).toBe(7_200);
  });

  it("takes the longer of the provider's length and the file's own, else estimates from the size", () => {
    expect(audioSeconds(45, 300, 300_000)).toBe(300);
    expect(audioSeconds(1_500, 1, 300_000)).toBe(1_500);
    expect(audioSeconds(undefined, 300, 300_000)).toBe(300);
    expect(audioSeconds(3, undefined, 300_000)).toBe(3);
    expect(audioSeconds(undefined, undefined, 48_000)).toBe(3);
  });
});
