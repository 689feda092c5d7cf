// eslint-disable-next-line @nx/enforce-module-boundaries
import { makeMp3 } from '../../../../tools/emulator/src/media/mp3';
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
});
