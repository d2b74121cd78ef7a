// PNG checks without dependencies (PNG specification, 3rd edition, section 5): the signature,
// every chunk's length and CRC, IHDR first, IEND last. Only the chunks that make the image
// (IHDR, PLTE, tRNS, IDAT, IEND) are kept, so no text, time or other metadata is ever served.

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const KEPT = new Set(['IHDR', 'PLTE', 'tRNS', 'IDAT', 'IEND']);

export interface Png {
  width: number;
  height: number;
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

/** IHDR after the size: bit depth, colour type, compression, filter and interlace methods. */
function checkHeader([depth, colour, compression, filter, interlace]: Uint8Array): void {
  if (!DEPTHS[colour!]?.includes(depth!)) throw new PngError(`the PNG header has colour type ${colour} with bit depth ${depth}`);
  if (compression !== 0 || filter !== 0 || (interlace !== 0 && interlace !== 1)) throw new PngError('the PNG header names an unknown method');
}

/** Checks `data` is one well-formed PNG and returns its size and its image chunks only. */
export function readPng(data: Buffer): Png {
  if (data.length < SIGNATURE.length || !data.subarray(0, 8).equals(SIGNATURE)) throw new PngError('not a PNG file');
  const kept: Buffer[] = [SIGNATURE];
  let width = 0;
  let height = 0;
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
      checkHeader(data.subarray(at + 16, at + 21));
    } else if (type === 'IHDR') throw new PngError('the PNG file has a second IHDR');
    if (KEPT.has(type)) kept.push(data.subarray(at, end));
    // A critical chunk (upper-case first letter) that a decoder must understand, and we do not.
    else if (type[0]! < 'a') throw new PngError(`the PNG file has an unknown critical chunk ${type}`);
    sawData ||= type === 'IDAT';
    at = end;
    if (type === 'IEND') {
      if (at !== data.length) throw new PngError('the PNG file has data after IEND');
      if (!sawData) throw new PngError('the PNG file has no image data');
      return { width, height, bytes: Buffer.concat(kept) };
    }
  }
}
