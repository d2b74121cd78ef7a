// The pixels of a PNG in every colour type, bit depth, filter and interlace method, and the
// texture hash of authlib-injector's specification over them: one image, however it is encoded,
// has one hash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decodePixels, textureHash } from '../../src/textures/pixels.ts';
import { checkImageData, readPng } from '../../src/textures/png.ts';
import { chunk, pixelsPng, specHash } from '../helpers/png.ts';

const W = 13;
const H = 11;

/** The pixels of `png` as the upload path decodes them. */
const decode = (png: Buffer): Uint8Array => {
  const read = readPng(png);
  return decodePixels(read, checkImageData(read));
};

/** RGBA pixels, row by row, from a colour for each (x, y). */
const image = (colour: (x: number, y: number) => number[]): Uint8Array => {
  const out = new Uint8Array(W * H * 4);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) out.set(colour(x, y), (y * W + x) * 4);
  return out;
};

/** 16 colours, four of them fully transparent with a colour all the same, two half transparent. */
const COLOURS = Array.from({ length: 16 }, (_, i) => [(i * 53) & 0xff, (i * 97 + 10) & 0xff, (i * 29 + 200) & 0xff, i < 4 ? 0 : i < 6 ? 128 : 255]);
const indexAt = (x: number, y: number): number => (x * 7 + y * 3 + ((x * y) % 5)) % 16;
const PAINTED = image((x, y) => COLOURS[indexAt(x, y)]!);

test('one image in every encoding decodes to the same pixels, and hashes as the specification says', () => {
  const expected = specHash(W, H, PAINTED);
  const palette = chunk('PLTE', Buffer.from(COLOURS.flatMap((c) => c.slice(0, 3))));
  const alphas = chunk('tRNS', Buffer.from(COLOURS.map((c) => c[3]!)));
  for (const interlace of [0, 1]) {
    const encodings: [string, Buffer][] = [
      ['RGBA, 8 bits', pixelsPng({ width: W, height: H, interlace }, (x, y) => COLOURS[indexAt(x, y)]!)],
      ['RGBA, 16 bits', pixelsPng({ width: W, height: H, depth: 16, interlace }, (x, y) => COLOURS[indexAt(x, y)]!.map((v) => v * 257))],
      ['a palette of 8 bits with tRNS', pixelsPng({ width: W, height: H, colour: 3, interlace }, (x, y) => [indexAt(x, y)], [palette, alphas])],
      ['a palette of 4 bits with tRNS', pixelsPng({ width: W, height: H, colour: 3, depth: 4, interlace }, (x, y) => [indexAt(x, y)], [palette, alphas])],
    ];
    // Four of the colours (one transparent, one half), as a palette of 2 bits; two opaque ones as a palette of 1 bit.
    const four = image((x, y) => COLOURS[[0, 4, 6, 9][indexAt(x, y) % 4]!]!);
    const fourPalette = chunk('PLTE', Buffer.from([0, 4, 6, 9].flatMap((i) => COLOURS[i]!.slice(0, 3))));
    const fourAlphas = chunk('tRNS', Buffer.from([0, 4, 6, 9].map((i) => COLOURS[i]![3]!)));
    const two = image((x, y) => COLOURS[[6, 9][indexAt(x, y) % 2]!]!);
    const twoPalette = chunk('PLTE', Buffer.from([6, 9].flatMap((i) => COLOURS[i]!.slice(0, 3))));
    for (const [what, png, pixels] of [
      ['a palette of 2 bits with tRNS', pixelsPng({ width: W, height: H, colour: 3, depth: 2, interlace }, (x, y) => [indexAt(x, y) % 4], [fourPalette, fourAlphas]), four],
      ['a palette of 1 bit', pixelsPng({ width: W, height: H, colour: 3, depth: 1, interlace }, (x, y) => [indexAt(x, y) % 2], [twoPalette]), two],
    ] as [string, Buffer, Uint8Array][]) {
      assert.deepEqual(decode(png), pixels, `${what}, interlace ${interlace}`);
    }
    for (const [what, png] of encodings) {
      const pixels = decode(png);
      assert.deepEqual(pixels, PAINTED, `${what}, interlace ${interlace}: the pixels`);
      assert.equal(textureHash(W, H, pixels), expected, `${what}, interlace ${interlace}: the hash`);
    }
  }
});

test('grey at every depth, with and without alpha, and as RGB, are one image', () => {
  // Four levels, so that 2 bits hold them; each a multiple of 85, so that every depth holds them exactly.
  const levelAt = (x: number, y: number): number => (x + 2 * y) % 4;
  const grey = image((x, y) => [levelAt(x, y) * 85, levelAt(x, y) * 85, levelAt(x, y) * 85, 255]);
  const expected = specHash(W, H, grey);
  const at = (scale: number) => (x: number, y: number) => [levelAt(x, y) * scale];
  for (const interlace of [0, 1]) {
    const encodings: [string, Buffer][] = [
      ['grey, 2 bits', pixelsPng({ width: W, height: H, colour: 0, depth: 2, interlace }, at(1))],
      ['grey, 4 bits', pixelsPng({ width: W, height: H, colour: 0, depth: 4, interlace }, at(5))],
      ['grey, 8 bits', pixelsPng({ width: W, height: H, colour: 0, depth: 8, interlace }, at(85))],
      ['grey, 16 bits', pixelsPng({ width: W, height: H, colour: 0, depth: 16, interlace }, at(85 * 257))],
      ['grey and alpha, 8 bits', pixelsPng({ width: W, height: H, colour: 4, interlace }, (x, y) => [levelAt(x, y) * 85, 255])],
      ['RGB, 8 bits', pixelsPng({ width: W, height: H, colour: 2, interlace }, (x, y) => [0, 0, 0].map(() => levelAt(x, y) * 85))],
      ['RGB, 16 bits', pixelsPng({ width: W, height: H, colour: 2, depth: 16, interlace }, (x, y) => [0, 0, 0].map(() => levelAt(x, y) * 85 * 257))],
      ['grey and alpha, 16 bits', pixelsPng({ width: W, height: H, colour: 4, depth: 16, interlace }, (x, y) => [levelAt(x, y) * 85 * 257, 65535])],
    ];
    for (const [what, png] of encodings) {
      const pixels = decode(png);
      assert.deepEqual(pixels, grey, `${what}, interlace ${interlace}: the pixels`);
      assert.equal(textureHash(W, H, pixels), expected, `${what}, interlace ${interlace}`);
    }
  }
  // One bit: black and white.
  const bw = image((x, y) => ((x + y) % 2 ? [255, 255, 255, 255] : [0, 0, 0, 255]));
  const oneBit = pixelsPng({ width: W, height: H, colour: 0, depth: 1 }, (x, y) => [(x + y) % 2]);
  assert.equal(textureHash(W, H, decode(oneBit)), specHash(W, H, bw));
});

test('a tRNS key makes its grey or RGB value transparent, and a transparent pixel hashes alike whatever its colour', () => {
  const key = [10, 200, 30];
  const keyed = decode(pixelsPng({ width: W, height: H, colour: 2 }, (x, y) => ((x + y) % 3 === 0 ? key : [x * 9, y * 11, 77]), [chunk('tRNS', Buffer.from([0, 10, 0, 200, 0, 30]))]));
  const plain = image((x, y) => ((x + y) % 3 === 0 ? [99, 1, 250, 0] : [x * 9, y * 11, 77, 255]));
  assert.deepEqual(keyed.filter((_, i) => i % 4 === 3), plain.filter((_, i) => i % 4 === 3), 'the keyed pixels are the transparent ones');
  assert.equal(textureHash(W, H, keyed), textureHash(W, H, plain));
  assert.equal(textureHash(W, H, plain), specHash(W, H, plain));
  const greyKeyed = decode(pixelsPng({ width: W, height: H, colour: 0 }, (x) => [x === 4 ? 60 : 61], [chunk('tRNS', Buffer.from([0, 60]))]));
  assert.deepEqual([greyKeyed[4 * 4 + 3], greyKeyed[5 * 4 + 3]], [0, 255]);
});

test('16 bits go to the nearest of 256 levels; a 16-bit tRNS key is compared at 16 bits', () => {
  // 257·k is level k exactly; 128 more is past half way to the next level, 128 less not.
  const values = [0, 257 * 10 + 127, 257 * 10 + 129, 257 * 200 - 128, 65535, 1, 65534];
  const expected = [0, 10, 11, 200, 255, 0, 255];
  const png = pixelsPng({ width: values.length, height: 1, colour: 0, depth: 16 }, (x) => [values[x]!]);
  assert.deepEqual([...decode(png)].filter((_, i) => i % 4 === 0), expected);
  // The key 0x0102: that value is transparent; 0x0101, the same 8-bit level, is not.
  const keyed = decode(pixelsPng({ width: 2, height: 1, colour: 0, depth: 16 }, (x) => [x === 0 ? 0x0102 : 0x0101], [chunk('tRNS', Buffer.from([1, 2]))]));
  assert.deepEqual([keyed[3], keyed[7]], [0, 255]);
});

test('PLTE and tRNS are read where the specification puts them: before the image data, the first of each', () => {
  const red = chunk('PLTE', Buffer.from([255, 0, 0]));
  const png = pixelsPng({ width: 2, height: 1, colour: 3 }, () => [0], [red]);
  // A second PLTE and a tRNS after IDAT: a decoder that follows the specification ignores them.
  const late = Buffer.concat([png.subarray(0, -12), chunk('PLTE', Buffer.from([0, 0, 255])), chunk('tRNS', Buffer.from([0])), png.subarray(-12)]);
  assert.deepEqual([...decode(late).subarray(0, 4)], [255, 0, 0, 255]);
});

test('the hash goes column by column: an image and its mirror, or one pixel moved, differ', () => {
  const mirrored = image((x, y) => COLOURS[indexAt(W - 1 - x, y)]!);
  assert.notEqual(textureHash(W, H, mirrored), textureHash(W, H, PAINTED));
  // Row by row would be another hash.
  const byRows = createHash('sha256').update(Buffer.concat([Buffer.from([0, 0, 0, W, 0, 0, 0, H])]));
  for (let i = 0; i < PAINTED.length; i += 4) byRows.update(PAINTED[i + 3] === 0 ? Buffer.alloc(4) : Buffer.from([PAINTED[i + 3]!, ...PAINTED.subarray(i, i + 3)]));
  assert.equal(textureHash(W, H, PAINTED), specHash(W, H, PAINTED));
  assert.notEqual(textureHash(W, H, PAINTED), byRows.digest('hex'));
  const moved = Uint8Array.from(PAINTED);
  moved.set([1, 2, 3, 255], 0);
  assert.notEqual(textureHash(W, H, moved), textureHash(W, H, PAINTED));
  // The size counts: the same bytes as 11×13 are another image.
  assert.notEqual(textureHash(H, W, PAINTED), textureHash(W, H, PAINTED));
});

test('a palette index past the palette is opaque black, not a refusal; so is a colour a PLTE cut short holds only in part', () => {
  const short = chunk('PLTE', Buffer.from([255, 0, 0, 0, 255, 0, 7]));
  const pixels = decode(pixelsPng({ width: W, height: H, colour: 3 }, (x) => [x % 4], [short, chunk('tRNS', Buffer.from([255, 128, 0, 0]))]));
  assert.deepEqual([...pixels.subarray(0, 16)], [255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 0, 255, 0, 0, 0, 255]);
});
