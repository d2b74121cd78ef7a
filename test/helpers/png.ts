// A tiny PNG encoder for tests: RGBA, 8 bits, no filter, with extra chunks on request; and one
// for any colour type, bit depth and interlace method, from raw scanlines.
// zlib's own CRC-32, not the one under test, so the fixtures are independent of src/.
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { crc32, createDeflate, deflateSync, inflateSync } from 'node:zlib';

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

/** SHA-256 in lower-case hex: what names a hosted texture's file in databases made before the texture hash. */
export const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The texture hash of authlib-injector's specification, written out as it reads, apart from
 * src/: SHA-256 of the width and the height (32-bit big-endian), then each column top to bottom,
 * left to right, as A, R, G, B bytes, with R, G and B zero where A is. `rgba`: row by row.
 */
export function specHash(width: number, height: number, rgba: Uint8Array): string {
  const hash = createHash('sha256');
  const size = Buffer.alloc(8);
  size.writeUInt32BE(width, 0);
  size.writeUInt32BE(height, 4);
  hash.update(size);
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      const [r, g, b, a] = rgba.subarray((y * width + x) * 4, (y * width + x) * 4 + 4);
      hash.update(Buffer.from(a === 0 ? [0, 0, 0, 0] : [a!, r!, g!, b!]));
    }
  }
  return hash.digest('hex');
}

/**
 * The name a hosted texture goes by (its texture hash), for the images these helpers make with
 * every scanline unfiltered, not interlaced: 8-bit RGBA (encodePng, randomPng) or an 8-bit
 * palette with its tRNS. Any other image throws: a test of those hashes their pixels itself.
 */
export function textureName(png: Buffer): string {
  const chunks = new Map<string, Buffer[]>();
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    chunks.set(type, [...(chunks.get(type) ?? []), png.subarray(at + 8, at + 8 + length)]);
    at += 12 + length;
  }
  const ihdr = chunks.get('IHDR')![0]!;
  const [width, height, depth, colour, interlace] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9], ihdr[12]];
  if (depth !== 8 || (colour !== 6 && colour !== 3) || interlace !== 0) throw new Error('textureName: not an 8-bit RGBA or palette image without interlace');
  const rows = inflateSync(Buffer.concat(chunks.get('IDAT')!));
  const stride = 1 + width * (colour === 6 ? 4 : 1);
  const rgba = new Uint8Array(width * height * 4);
  const [palette, alphas] = [chunks.get('PLTE')?.[0], chunks.get('tRNS')?.[0]];
  for (let y = 0; y < height; y++) {
    if (rows[y * stride] !== 0) throw new Error('textureName: a filtered scanline');
    for (let x = 0; x < width; x++) {
      const at = y * stride + 1;
      const pixel = colour === 6 ? rows.subarray(at + 4 * x, at + 4 * x + 4) : [...palette!.subarray(3 * rows[at + x]!, 3 * rows[at + x]! + 3), alphas?.[rows[at + x]!] ?? 255];
      rgba.set(pixel, (y * width + x) * 4);
    }
  }
  return specHash(width, height, rgba);
}

/** An image header: left out, 8-bit RGBA, not interlaced. */
export interface ImageHeader {
  width: number;
  height: number;
  depth?: number;
  /** 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
  colour?: number;
  /** 0 none, 1 Adam7. */
  interlace?: number;
}

const SAMPLES: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Adam7's passes (spec 8.2), written out here apart from src/: first row, first column, row step, column step. */
const ADAM7_STARTS = [[0, 0, 8, 8], [0, 4, 8, 8], [4, 0, 8, 4], [0, 2, 4, 4], [2, 0, 4, 2], [0, 1, 2, 2], [1, 0, 2, 1]] as const;

/**
 * The scanlines `h` calls for, each with a valid filter type (row number mod 5, so all five
 * appear) and pixel bytes from `seed`; `rows` gives where each scanline starts. Adam7 passes are
 * counted pixel by pixel (spec 8.2), not by the formula src/ uses.
 */
export function scanlines(h: ImageHeader, seed = 0): { data: Buffer; rows: number[] } {
  const bits = (h.depth ?? 8) * SAMPLES[h.colour ?? 6]!;
  const passes: [number, number][] = [];
  if ((h.interlace ?? 0) === 0) passes.push([h.height, h.width]);
  else {
    for (const [y0, x0, dy, dx] of ADAM7_STARTS) {
      let rows = 0;
      let cols = 0;
      for (let y = 0; y < h.height; y++) if (y % dy === y0) rows++;
      for (let x = 0; x < h.width; x++) if (x % dx === x0) cols++;
      if (rows && cols) passes.push([rows, cols]);
    }
  }
  const parts: Buffer[] = [];
  const rows: number[] = [];
  let at = 0;
  for (const [count, cols] of passes) {
    for (let r = 0; r < count; r++) {
      const line = Buffer.alloc(1 + Math.ceil((cols * bits) / 8));
      line[0] = rows.length % 5;
      for (let i = 1; i < line.length; i++) line[i] = (i * 31 + r * 7 + seed) & 0xff;
      rows.push(at);
      parts.push(line);
      at += line.length;
    }
  }
  return { data: Buffer.concat(parts), rows };
}

/** A PNG with header `h`, `extra` chunks (a PLTE, say) after IHDR, and `idat` as its image data, as given: one IDAT chunk each. */
export function encodeImage(h: ImageHeader, idat: Buffer | Buffer[], extra: Buffer[] = []): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(h.width, 0);
  ihdr.writeUInt32BE(h.height, 4);
  ihdr[8] = h.depth ?? 8;
  ihdr[9] = h.colour ?? 6;
  ihdr[12] = h.interlace ?? 0;
  const data = Array.isArray(idat) ? idat : [idat];
  return Buffer.concat([encodePng(1, 1).subarray(0, 8), chunk('IHDR', ihdr), ...extra, ...data.map((d) => chunk('IDAT', d)), chunk('IEND')]);
}

/** A well-formed PNG with header `h`: its scanlines deflated into one IDAT. */
export const imagePng = (h: ImageHeader, extra: Buffer[] = [], seed = 0): Buffer => encodeImage(h, deflateSync(scanlines(h, seed).data), extra);

/**
 * A PNG with header `h` whose pixel at (x, y) has the samples `at(x, y)` (each at the header's
 * depth), every scanline filtered with a filter of its own (the row number mod 5, each computed
 * here from the raw bytes), Adam7 passes counted pixel by pixel. For tests of decoding.
 */
export function pixelsPng(h: ImageHeader, at: (x: number, y: number) => number[], extra: Buffer[] = []): Buffer {
  const depth = h.depth ?? 8;
  const bits = depth * SAMPLES[h.colour ?? 6]!;
  const starts: readonly (readonly [number, number, number, number])[] = (h.interlace ?? 0) === 0 ? [[0, 0, 1, 1]] : ADAM7_STARTS;
  const lines: Buffer[] = [];
  for (const [y0, x0, dy, dx] of starts) {
    const ys = Array.from({ length: h.height }, (_, y) => y).filter((y) => y % dy === y0);
    const xs = Array.from({ length: h.width }, (_, x) => x).filter((x) => x % dx === x0);
    if (ys.length === 0 || xs.length === 0) continue;
    let prior: Buffer | undefined;
    for (const y of ys) {
      const raw = Buffer.alloc(Math.ceil((xs.length * bits) / 8));
      let bit = 0;
      for (const x of xs) {
        for (const v of at(x, y)) {
          if (depth === 16) raw.writeUInt16BE(v, bit / 8);
          else if (depth === 8) raw[bit / 8] = v;
          else raw[bit >> 3] |= v << (8 - depth - (bit & 7));
          bit += depth;
        }
      }
      const filter = lines.length % 5;
      const step = Math.max(1, bits >> 3);
      const line = Buffer.alloc(1 + raw.length);
      line[0] = filter;
      for (let i = 0; i < raw.length; i++) {
        const a = i >= step ? raw[i - step]! : 0;
        const b = prior ? prior[i]! : 0;
        const c = i >= step && prior ? prior[i - step]! : 0;
        const p = a + b - c;
        const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
        line[1 + i] = (raw[i]! - [0, a, b, (a + b) >> 1, paeth][filter]!) & 0xff;
      }
      lines.push(line);
      prior = raw;
    }
  }
  return encodeImage(h, deflateSync(Buffer.concat(lines)), extra);
}

/** A PLTE of `entries` colours. */
export const plte = (entries = 256): Buffer => chunk('PLTE', Buffer.alloc(entries * 3, 0x7f));

/**
 * A zlib stream of `bytes` zeros, deflated piece by piece so the zeros are never in memory at
 * once: 200 MiB makes about 200 KiB.
 */
export async function zlibZeros(bytes: number): Promise<Buffer> {
  const z = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const ended = once(z, 'end');
  const piece = Buffer.alloc(1024 * 1024);
  for (let left = bytes; left > 0; left -= piece.length) {
    if (!z.write(piece.subarray(0, Math.min(left, piece.length)))) await once(z, 'drain');
  }
  z.end();
  await ended;
  return Buffer.concat(out);
}
