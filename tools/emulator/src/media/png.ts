// Valid PNG images of one colour: IHDR with the requested size, one deflated IDAT, IEND.
// A solid colour deflates to a few KiB even at 1792x1024, so answers stay small.
import { deflateSync } from 'node:zlib';
import { hashText } from '../util';

/** Larger sides would cost the emulator tens of MiB per image to build; providers stop near here too. */
export const MAX_IMAGE_SIDE = 2048;

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function crc32(bytes: Buffer): number {
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

const cache = new Map<string, Buffer>();
const CACHE_SIZE = 32;

/** A `width`×`height` RGB PNG of the colour picked by `seed` (same seed, same bytes). */
export function makePng(width: number, height: number, seed: number): Buffer {
  const key = `${width}x${height}:${seed}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const [red, green, blue] = [seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff];
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) {
    row[1 + x * 3] = red;
    row[2 + x * 3] = green;
    row[3 + x * 3] = blue;
  }
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour RGB
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, png);
  return png;
}

/** The seed of a prompt's images: the same prompt paints the same colour. */
export function imageSeed(prompt: string, index = 0): number {
  return hashText(`${prompt}#${index}`) & 0xffffff;
}

/** Where the emulator serves an image it generated, on the host the request came to. */
export function imageUrl(host: string | undefined, width: number, height: number, seed: number): string {
  return `http://${host ?? '127.0.0.1'}/media/images/${width}x${height}/${seed}.png`;
}
