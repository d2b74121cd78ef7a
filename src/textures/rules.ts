// What the game accepts as a skin or a cape, and how big an upload may be.
import { MAX_HD_SCALE, MAX_TEXTURE_BYTES } from './limits.ts';
import { decodePixels, textureHash } from './pixels.ts';
import { checkImageData, PngError, readPng } from './png.ts';

export type TextureKind = 'skin' | 'cape';

/**
 * Skins are 64×64 (or the older 64×32), capes 64×32. With `hd`, whole multiples of those sizes
 * (high-resolution packs) are accepted too.
 */
export function textureSizeProblem(kind: TextureKind, width: number, height: number, hd: boolean): string | undefined {
  const scale = width / 64;
  // A cap on HD: a game client allocates width × height × 4 bytes for every skin it sees.
  const scaled = hd && Number.isInteger(scale) && scale >= 1 && scale <= MAX_HD_SCALE ? scale : 1;
  const fits = kind === 'skin' ? width === 64 * scaled && (height === 64 * scaled || height === 32 * scaled) : width === 64 * scaled && height === 32 * scaled;
  if (fits) return undefined;
  const wanted = kind === 'skin' ? '64×64 or 64×32' : '64×32';
  return `${kind} must be ${wanted}${hd ? ` (or a whole multiple up to ${MAX_HD_SCALE} times)` : ''}, got ${width}×${height}`;
}

export function uploadSizeProblem(bytes: number): string | undefined {
  return bytes > MAX_TEXTURE_BYTES ? `a texture must be at most ${MAX_TEXTURE_BYTES} bytes, got ${bytes}` : undefined;
}

/**
 * What to keep of an upload (its image chunks only) and the texture hash of its pixels that names
 * it, or what is wrong with it: a real PNG of the game's sizes whose image data decodes.
 */
export function readTexture(kind: TextureKind, bytes: Buffer, hd: boolean): { hash: string; png: Buffer } | { problem: string } {
  const tooBig = uploadSizeProblem(bytes.length);
  if (tooBig) return { problem: tooBig };
  try {
    const png = readPng(bytes);
    const wrongSize = textureSizeProblem(kind, png.width, png.height, hd);
    if (wrongSize) return { problem: wrongSize };
    // Only now: the size check bounds what inflating the image data may allocate.
    const pixels = decodePixels(png, checkImageData(png));
    return { hash: textureHash(png.width, png.height, pixels), png: png.bytes };
  } catch (err) {
    if (err instanceof PngError) return { problem: `${kind}: ${err.message}` };
    throw err;
  }
}
