// eslint-disable-next-line @nx/enforce-module-boundaries
import { makeMp3, MP3_FRAME_SECONDS } from '../../../../tools/emulator/src/media/mp3';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { makeWav } from '../../../../tools/emulator/src/media/wav';
import { audioDurationSeconds } from './audio-facts';

describe('audioDurationSeconds', () => {
  it('reads the length of an MP3 and a WAV from their bytes', async () => {
    expect(await audioDurationSeconds(makeMp3(300))).toBeCloseTo(300, 6);
    expect(await audioDurationSeconds(makeMp3(90, [8, 16, 32]))).toBeCloseTo(90, 1);
    expect(await audioDurationSeconds(makeWav({ seconds: 2.5 }))).toBeCloseTo(2.5, 6);
  });

  it('has no length for bytes that are not audio it knows, or cut short', async () => {
    expect(await audioDurationSeconds(Buffer.concat([Buffer.from('EMULATED mp3 AUDIO\n'), Buffer.alloc(48_000)]))).toBeUndefined();
    expect(await audioDurationSeconds(Buffer.from('RIFF....WAVEjunk'))).toBeUndefined();
    expect(await audioDurationSeconds(Buffer.alloc(1))).toBeUndefined();
  });

  it('gives up on a file too costly to read (tiny variable-rate frames), without holding the event loop', async () => {
    // 70,000 frames of 24 and 48 bytes: every frame must be walked, past the read budget.
    const costly = makeMp3(70_000 * MP3_FRAME_SECONDS, [8, 16]);
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    try {
      expect(await audioDurationSeconds(costly)).toBeUndefined();
    } finally {
      clearInterval(ticker);
    }
    // The parse hands the event loop back as it goes: other requests' timers ran meanwhile.
    expect(turns).toBeGreaterThan(0);
  });
});
