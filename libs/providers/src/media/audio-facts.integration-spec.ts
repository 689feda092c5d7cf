// Integration tier: only a file past the parse's read budget proves the budget, and walking
// that many frames takes seconds the unit tier (audio-facts.spec.ts) does not spend.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { makeMp3, MP3_FRAME_SECONDS } from '../../../../tools/emulator/src/media/mp3';
import { audioDurationSeconds } from './audio-facts';

describe('audioDurationSeconds', () => {
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
