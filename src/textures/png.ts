// PNG checks without dependencies (PNG specification, 3rd edition, section 5): the signature,
// every chunk's length and CRC, IHDR first, IEND last. Only the chunks that make the image
// (IHDR, PLTE, tRNS, IDAT, IEND) are kept, so no text, time or other metadata is ever served.
// checkImageData then inflates the image data, bounded by the size the header implies.
import { inflateSync } from 'node:zlib';
import { MAX_IMAGE_DATA_BYTES } from './limits.ts';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const KEPT = new Set(['IHDR', 'PLTE', 'tRNS', 'IDAT', 'IEND']);

export interface Png {
  width: number;
  height: number;
  /** IHDR's bit depth, colour type and interlace method (0 none, 1 Adam7). */
  depth: number;
  colour: number;
  interlace: number;
  /** PLTE's and tRNS's data, where the image has them. */
  palette?: Buffer;
  transparency?: Buffer;
  /** The data of every IDAT chunk, joined: one zlib stream (section 10.1). */
  imageData: Buffer;
  /** The image again, with only the kept chunks. */
  bytes: Buffer;
}

export class PngError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PngError';
  }
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 as PNG uses it (ISO 3309), over a chunk's type and data. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Bit depths each colour type allows (PNG specification, table 11.1). */
const DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** Samples per pixel of each colour type (section 6.1): grey, RGB, palette index, grey + alpha, RGBA. */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** IHDR after the size: bit depth, colour type, compression, filter and interlace methods. */
function checkHeader([depth, colour, compression, filter, interlace]: Uint8Array): void {
  if (!DEPTHS[colour!]?.includes(depth!)) throw new PngError(`the PNG header has colour type ${colour} with bit depth ${depth}`);
  if (compression !== 0 || filter !== 0 || (interlace !== 0 && interlace !== 1)) throw new PngError('the PNG header names an unknown method');
}

/** Checks `data` is one well-formed PNG and returns its size and its image chunks only. */
export function readPng(data: Buffer): Png {
  if (data.length < SIGNATURE.length || !data.subarray(0, 8).equals(SIGNATURE)) throw new PngError('not a PNG file');
  const kept: Buffer[] = [SIGNATURE];
  const idat: Buffer[] = [];
  let width = 0;
  let height = 0;
  let header = data.subarray(0, 0);
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  let sawData = false;
  for (let at = 8, index = 0; ; index++) {
    if (at + 12 > data.length) throw new PngError('the PNG file is truncated');
    const length = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    const end = at + 12 + length;
    if (!/^[A-Za-z]{4}$/.test(type)) throw new PngError('the PNG file has a malformed chunk');
    if (length > 0x7fffffff || end > data.length) throw new PngError('the PNG file is truncated');
    if (crc32(data.subarray(at + 4, end - 4)) !== data.readUInt32BE(end - 4)) throw new PngError(`the PNG chunk ${type} has a bad CRC`);
    if (index === 0) {
      if (type !== 'IHDR' || length !== 13) throw new PngError('the PNG file does not start with IHDR');
      width = data.readUInt32BE(at + 8);
      height = data.readUInt32BE(at + 12);
      if (width === 0 || height === 0) throw new PngError('the PNG image is empty');
      header = data.subarray(at + 16, at + 21);
      checkHeader(header);
    } else if (type === 'IHDR') throw new PngError('the PNG file has a second IHDR');
    // A palette image needs its PLTE before the image data (sections 5.6 and 11.2.3).
    if (type === 'IDAT' && header[1] === 3 && !palette) throw new PngError('the PNG palette image has no PLTE chunk before its image data');
    // The first of each, before the image data, as the specification places them (section 5.6).
    if (type === 'PLTE' && !sawData) palette ??= data.subarray(at + 8, end - 4);
    if (type === 'tRNS' && !sawData) transparency ??= data.subarray(at + 8, end - 4);
    if (type === 'IDAT') idat.push(data.subarray(at + 8, end - 4));
    if (KEPT.has(type)) kept.push(data.subarray(at, end));
    // A critical chunk (upper-case first letter) that a decoder must understand, and we do not.
    else if (type[0]! < 'a') throw new PngError(`the PNG file has an unknown critical chunk ${type}`);
    sawData ||= type === 'IDAT';
    at = end;
    if (type === 'IEND') {
      if (at !== data.length) throw new PngError('the PNG file has data after IEND');
      if (!sawData) throw new PngError('the PNG file has no image data');
      const [depth, colour, , , interlace] = header;
      const image = { width, height, depth: depth!, colour: colour!, interlace: interlace!, imageData: Buffer.concat(idat), bytes: Buffer.concat(kept) };
      return { ...image, ...(palette && { palette }), ...(transparency && { transparency }) };
    }
  }
}

/** Adam7's passes (section 8.2): first row, first column, row step, column step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [0, 4, 8, 8],
  [4, 0, 8, 4],
  [0, 2, 4, 4],
  [2, 0, 4, 2],
  [0, 1, 2, 2],
  [1, 0, 2, 1],
] as const;

/**
 * One (reduced) image's scanlines: its Adam7 pass (1 to 7; 0 when not interlaced), how many, the
 * bytes of each after its filter byte, and where its pixels lie in the whole image (first row and
 * column, row and column steps).
 */
export interface Pass {
  pass: number;
  rows: number;
  cols: number;
  rowBytes: number;
  place: readonly [number, number, number, number];
}

/** Bits a pixel takes in the scanlines. */
export const bitsPerPixel = (png: Png): number => png.depth * CHANNELS[png.colour]!;

/** The scanlines the header implies: one image, or Adam7's seven, skipping the empty ones (section 8.2). */
export function passes(png: Png): Pass[] {
  // Section 7.2: a scanline holds whole bytes, its last one padded.
  const rowBytes = (cols: number): number => Math.ceil((cols * bitsPerPixel(png)) / 8);
  if (png.interlace === 0) return [{ pass: 0, rows: png.height, cols: png.width, rowBytes: rowBytes(png.width), place: [0, 0, 1, 1] }];
  const out: Pass[] = [];
  ADAM7.forEach((place, index) => {
    const [row, col, rowStep, colStep] = place;
    const rows = Math.ceil(Math.max(0, png.height - row) / rowStep);
    const cols = Math.ceil(Math.max(0, png.width - col) / colStep);
    if (rows > 0 && cols > 0) out.push({ pass: index + 1, rows, cols, rowBytes: rowBytes(cols), place });
  });
  return out;
}

/**
 * Inflates the image data and checks it is exactly the scanlines the header implies, each with a
 * known filter type; returns them, still filtered. Never allocates more than that size, so call it
 * only once the width and height have passed the texture size check; past MAX_IMAGE_DATA_BYTES it
 * refuses unread anyway.
 */
export function checkImageData(png: Png): Buffer {
  const scanlines = passes(png);
  const expected = scanlines.reduce((sum, p) => sum + p.rows * (1 + p.rowBytes), 0);
  if (expected > MAX_IMAGE_DATA_BYTES) throw new PngError(`the PNG image is too big to decode (${expected} bytes)`);
  if (png.imageData.length === 0) throw new PngError('the PNG image data is empty');
  let pixels: Buffer;
  try {
    // The bound makes zlib stop (ERR_BUFFER_TOO_LARGE) rather than grow its output past it.
    pixels = inflateSync(png.imageData, { maxOutputLength: expected });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new PngError(`the PNG image data decodes to more than the ${expected} bytes its size implies`);
    if (code === 'Z_BUF_ERROR') throw new PngError('the PNG image data is cut short');
    if (code === 'Z_DATA_ERROR' || code === 'Z_NEED_DICT') throw new PngError('the PNG image data is not zlib');
    throw err;
  }
  if (pixels.length === 0) throw new PngError('the PNG image data is empty');
  if (pixels.length !== expected) throw new PngError(`the PNG image data decodes to ${pixels.length} bytes, not the ${expected} its size implies`);
  // Every scanline starts with its filter type, 0 to 4 (sections 7.3 and 9.2).
  let at = 0;
  for (const { pass, rows, rowBytes } of scanlines) {
    for (let row = 0; row < rows; row++, at += 1 + rowBytes) {
      const filter = pixels[at]!;
      if (filter > 4) throw new PngError(`the PNG image row ${row + 1}${pass ? ` of pass ${pass}` : ''} has an unknown filter type ${filter}`);
    }
  }
  return pixels;
}
