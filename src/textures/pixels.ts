// The pixels of a checked PNG (PNG specification, 3rd edition: filters in section 9, Adam7 in
// 8.2, colour types and tRNS in 6.1 and 11.3.2) and the name a hosted texture goes by: the texture
// hash of authlib-injector's Yggdrasil server specification, over the width, the height and the
// pixels, so that one image saved twice (by another encoder, as another colour type, interlaced
// or not) is one file at one address.
import { createHash } from 'node:crypto';
import { bitsPerPixel, passes, type Png } from './png.ts';

/** Paeth's predictor (section 9.4): of a (left), b (up) and c (up-left), the one nearest a + b - c. */
function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

/**
 * Undoes the filters of `rows` scanlines from `start` of `lines`, in place (section 9.2); `step`:
 * the bytes of one pixel, at least one (section 9.2's bpp).
 */
function unfilter(lines: Buffer, start: number, rows: number, rowBytes: number, step: number): void {
  for (let row = 0; row < rows; row++) {
    const at = start + row * (1 + rowBytes) + 1;
    const up = row === 0 ? -1 : at - (1 + rowBytes);
    const filter = lines[at - 1]!;
    for (let i = 0; i < rowBytes; i++) {
      const a = i >= step ? lines[at + i - step]! : 0;
      const b = up >= 0 ? lines[up + i]! : 0;
      const c = i >= step && up >= 0 ? lines[up + i - step]! : 0;
      const predicted = filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : filter === 4 ? paeth(a, b, c) : 0;
      lines[at + i] = (lines[at + i]! + predicted) & 0xff;
    }
  }
}

/** Sample `index` of a scanline starting at `at`, `depth` bits each, packed from the high bit (section 7.2). */
function sample(lines: Buffer, at: number, index: number, depth: number): number {
  if (depth === 8) return lines[at + index]!;
  if (depth === 16) return lines.readUInt16BE(at + 2 * index);
  const bit = index * depth;
  return (lines[at + (bit >> 3)]! >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
}

/**
 * The image's pixels, row by row, 8-bit RGBA, from its scanlines as checkImageData returned them
 * (which it unfilters in place). Grey below 8 bits is scaled up exactly, 16 bits to the nearest of
 * 256 levels; tRNS makes one grey or RGB value transparent, or gives palette entries their alpha
 * (section 11.3.2). A palette index past the palette (an error in the file) is taken as opaque
 * black rather than refused, so that no image accepted before is refused now. Every pixel is
 * written in place, with no allocation: a 1024×1024 image is a million of them.
 */
export function decodePixels(png: Png, lines: Buffer): Uint8Array {
  const { width, depth, colour, palette, transparency } = png;
  const out = new Uint8Array(width * png.height * 4);
  const bits = bitsPerPixel(png);
  const channels = bits / depth;
  const levels = Array.from({ length: depth === 16 ? 0 : 1 << depth }, (_, v) => (v * 255) / ((1 << depth) - 1));
  const scale = depth === 16 ? (v: number): number => Math.round((v * 255) / 65535) : (v: number): number => levels[v]!;
  // The one grey or RGB value tRNS makes transparent (section 11.3.2.1), at the image's depth.
  const key = transparency !== undefined && colour !== 3 && transparency.length >= 2 * channels ? Array.from({ length: channels }, (_, i) => transparency.readUInt16BE(2 * i)) : undefined;
  const entries = palette === undefined ? 0 : Math.floor(palette.length / 3);
  let start = 0;
  for (const { rows, cols, rowBytes, place } of passes(png)) {
    unfilter(lines, start, rows, rowBytes, Math.max(1, bits >> 3));
    const [firstRow, firstCol, rowStep, colStep] = place;
    for (let row = 0; row < rows; row++) {
      const at = start + row * (1 + rowBytes) + 1;
      const y = firstRow + row * rowStep;
      for (let col = 0; col < cols; col++) {
        const o = (y * width + firstCol + col * colStep) * 4;
        const first = col * channels;
        const v0 = sample(lines, at, first, depth);
        if (colour === 3) {
          const known = v0 < entries;
          out[o] = known ? palette![3 * v0]! : 0;
          out[o + 1] = known ? palette![3 * v0 + 1]! : 0;
          out[o + 2] = known ? palette![3 * v0 + 2]! : 0;
          out[o + 3] = known && transparency !== undefined && v0 < transparency.length ? transparency[v0]! : 255;
        } else if (colour === 0 || colour === 4) {
          const grey = scale(v0);
          out[o] = grey;
          out[o + 1] = grey;
          out[o + 2] = grey;
          out[o + 3] = colour === 4 ? scale(sample(lines, at, first + 1, depth)) : key !== undefined && key[0] === v0 ? 0 : 255;
        } else {
          const v1 = sample(lines, at, first + 1, depth);
          const v2 = sample(lines, at, first + 2, depth);
          out[o] = scale(v0);
          out[o + 1] = scale(v1);
          out[o + 2] = scale(v2);
          out[o + 3] = colour === 6 ? scale(sample(lines, at, first + 3, depth)) : key !== undefined && key[0] === v0 && key[1] === v1 && key[2] === v2 ? 0 : 255;
        }
      }
    }
    start += rows * (1 + rowBytes);
  }
  return out;
}

/**
 * The specification's texture hash (SHA-256, lower-case hex) of an image of 8-bit RGBA pixels:
 * over the width and the height (32-bit big-endian each), then every pixel column by column as
 * A, R, G, B bytes, the colour of a fully transparent pixel taken as black.
 */
export function textureHash(width: number, height: number, rgba: Uint8Array): string {
  const bytes = Buffer.alloc(8 + width * height * 4);
  bytes.writeUInt32BE(width, 0);
  bytes.writeUInt32BE(height, 4);
  let at = 8;
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++, at += 4) {
      const from = (y * width + x) * 4;
      const alpha = rgba[from + 3]!;
      // A transparent pixel's colour is left as the zeros the buffer starts with.
      if (alpha === 0) continue;
      bytes[at] = alpha;
      bytes[at + 1] = rgba[from]!;
      bytes[at + 2] = rgba[from + 1]!;
      bytes[at + 3] = rgba[from + 2]!;
    }
  }
  return createHash('sha256').update(bytes).digest('hex');
}
