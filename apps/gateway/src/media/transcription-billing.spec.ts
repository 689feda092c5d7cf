import { audioSeconds, billableSeconds, billedAudioSeconds, heldAudioSeconds, secondsTheBytesCanCarry } from './transcription-billing';

describe('seconds of audio billed', () => {
  it('rounds a started second up and bills at least one', () => {
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

  it('bounds audio of unreadable length at its bytes at 2 kbit/s, rounded up', () => {
    expect(secondsTheBytesCanCarry(48_000)).toBe(192);
    expect(secondsTheBytesCanCarry(2_501)).toBe(11);
    expect(secondsTheBytesCanCarry(1)).toBe(1);
    // The largest default fetch, 25 MiB, could carry about 29 hours: STT_MAX_AUDIO_SECONDS is the bound then.
    expect(secondsTheBytesCanCarry(25 * 1024 * 1024)).toBe(104_858);
  });

  it('holds max_duration_seconds for audio whose length was read, and the lower of it and the bytes bound otherwise', () => {
    expect(heldAudioSeconds(600, 5, 48_000)).toBe(600);
    expect(heldAudioSeconds(600, undefined, 48_000)).toBe(192);
    expect(heldAudioSeconds(100, undefined, 48_000)).toBe(100);
    expect(heldAudioSeconds(3_600, undefined, 25 * 1024 * 1024)).toBe(3_600);
  });

  it('never bills past the held bound, whatever the provider reports', () => {
    // Unreadable, 48,000 bytes: at most 192 s, and at most max_duration_seconds.
    expect(billedAudioSeconds(5_000, undefined, 48_000, 600)).toBe(192);
    expect(billedAudioSeconds(3, undefined, 48_000, 1)).toBe(1);
    expect(billedAudioSeconds(3, undefined, 48_000, 600)).toBe(3);
    expect(billedAudioSeconds(undefined, undefined, 48_000, 600)).toBe(3);
    expect(billedAudioSeconds(undefined, undefined, 25 * 1024 * 1024, 60)).toBe(60);
    // Readable: the longer of both figures, at most max_duration_seconds.
    expect(billedAudioSeconds(5_000, 5, 80_000, 600)).toBe(600);
    expect(billedAudioSeconds(45, 300, 300_000, 600)).toBe(300);
    expect(billedAudioSeconds(undefined, 4.2, 80_000, 600)).toBe(5);
  });
});
