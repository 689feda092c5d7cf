// Valid MP3 files of silence, small enough for tests: MPEG-2 Layer III frames, mono at 24 kHz,
// each 576 samples (24 ms) with zeroed side information (nothing to decode, so silence). At
// 8 kbit/s a frame is 24 bytes: five minutes of audio in 300 KB, which a real decoder plays.

/** Bitrate index of MPEG-2 Layer III (ISO 13818-3), by kbit/s. */
const BITRATE_INDEX: Record<number, number> = { 8: 1, 16: 2, 24: 3, 32: 4, 40: 5, 48: 6, 56: 7, 64: 8 };
const SAMPLE_RATE = 24_000;
const SAMPLES_PER_FRAME = 576;
export const MP3_FRAME_SECONDS = SAMPLES_PER_FRAME / SAMPLE_RATE;

function frame(kbps: number): Buffer {
  const index = BITRATE_INDEX[kbps];
  if (index === undefined) throw new RangeError(`no MPEG-2 Layer III bitrate of ${kbps} kbit/s`);
  const bytes = Buffer.alloc((72 * kbps * 1000) / SAMPLE_RATE);
  // Frame sync, MPEG-2, Layer III, no CRC; the bitrate, 24 kHz, no padding; mono.
  bytes[0] = 0xff;
  bytes[1] = 0xf3;
  bytes[2] = (index << 4) | (1 << 2);
  bytes[3] = 0xc4;
  return bytes;
}

/**
 * `seconds` of silence (rounded to whole frames). One bitrate makes a constant-rate file, whose
 * length a reader takes from its size; several, used in turn, a variable-rate one with no length
 * header, which a reader must walk frame by frame.
 */
export function makeMp3(seconds: number, bitratesKbps: readonly number[] = [8]): Buffer {
  const frames = bitratesKbps.map(frame);
  const count = Math.round(seconds / MP3_FRAME_SECONDS);
  return Buffer.concat(Array.from({ length: count }, (_, i) => frames[i % frames.length]));
}
