// A tiny PNG encoder for tests: RGBA, 8 bits, no filter, with extra chunks on request.
// zlib's own CRC-32, not the one under test, so the fixtures are independent of src/.
import { createHash, randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

export function chunk(type: string, data: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A width×height PNG whose pixels depend on `seed`; `extra` chunks go between IHDR and IDAT. */
export function encodePng(width: number, height: number, opts: { seed?: number; extra?: Buffer[] } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const rows = Buffer.alloc((width * 4 + 1) * height);
  for (let i = 0; i < rows.length; i++) rows[i] = i % (width * 4 + 1) === 0 ? 0 : (i * 31 + (opts.seed ?? 0)) & 0xff;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    ...(opts.extra ?? []),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND'),
  ]);
}

/** An RGBA image of random pixels: deflate cannot shrink it. */
export function randomPng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const rows = randomBytes((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) rows[y * (width * 4 + 1)] = 0;
  return Buffer.concat([encodePng(1, 1).subarray(0, 8), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows, { level: 0 })), chunk('IEND')]);
}

/** `png` with `extra` chunks inserted before IEND. */
export const beforeIend = (png: Buffer, extra: Buffer[]): Buffer => Buffer.concat([png.subarray(0, -12), ...extra, png.subarray(-12)]);

/** The PNG grown to exactly `size` bytes by a tEXt chunk (which is dropped when stored). */
export function padTo(png: Buffer, size: number): Buffer {
  const data = Buffer.alloc(size - png.length - 12, 0x41);
  data.write('Comment\0', 0, 'latin1');
  const out = beforeIend(png, [chunk('tEXt', data)]);
  if (out.length !== size) throw new Error(`padTo made ${out.length} bytes, not ${size}`);
  return out;
}

/** SHA-256 in lower-case hex, as textures are named. */
export const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
