import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { MAX_IMAGE_DATA_BYTES } from '../../src/textures/limits.ts';
import { checkImageData, crc32, readPng } from '../../src/textures/png.ts';
import { chunk, encodeImage, encodePng, imagePng, plte, randomPng, scanlines, zlibZeros, type ImageHeader } from '../helpers/png.ts';

test('reads the size of a well-formed PNG and keeps it whole when it has only image chunks', () => {
  const png = encodePng(64, 32);
  const read = readPng(png);
  assert.deepEqual([read.width, read.height], [64, 32]);
  assert.deepEqual(read.bytes, png);
  assert.equal(crc32(Buffer.from('IEND')), 0xae426082, 'the CRC every IEND chunk carries');
});

test('drops text, time and other ancillary chunks, keeps PLTE and tRNS', () => {
  const text = chunk('tEXt', Buffer.from('Comment\0secret'));
  const time = chunk('tIME', Buffer.alloc(7));
  const trns = chunk('tRNS', Buffer.from([0, 0]));
  const read = readPng(encodePng(64, 64, { extra: [text, time, trns] }));
  assert.ok(!read.bytes.includes(Buffer.from('tEXt')) && !read.bytes.includes(Buffer.from('secret')));
  assert.ok(!read.bytes.includes(Buffer.from('tIME')));
  assert.ok(read.bytes.includes(trns));
  assert.deepEqual(readPng(read.bytes).bytes, read.bytes, 'the result is itself a valid PNG');
});

/** `png` with the length field of the chunk at `at` replaced. */
function withLength(png: Buffer, at: number, length: number): Buffer {
  const copy = Buffer.from(png);
  copy.writeUInt32BE(length, at);
  return copy;
}

/** `png` with IHDR's bytes after the size (depth, colour, methods) replaced and its CRC made right. */
function withHeader(png: Buffer, fields: number[]): Buffer {
  const ihdr = Buffer.from(png.subarray(16, 29));
  Buffer.from(fields).copy(ihdr, 8);
  return Buffer.concat([png.subarray(0, 8), chunk('IHDR', ihdr), png.subarray(33)]);
}

test('refuses what is not one well-formed PNG, saying what is wrong', () => {
  const good = encodePng(64, 64);
  const badCrc = Buffer.from(good);
  badCrc[45] = badCrc[45]! ^ 0xff; // inside IDAT's data (IDAT starts at 33: length, type, then data at 41)
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
  const ihdrLater = Buffer.concat([good.subarray(0, 8), chunk('tEXt', Buffer.from('a\0b')), good.subarray(8)]);
  const cases: [Buffer, RegExp][] = [
    [jpeg, /not a PNG file/],
    [Buffer.alloc(0), /not a PNG file/],
    [good.subarray(0, good.length - 5), /truncated/],
    [good.subarray(0, 20), /truncated/],
    [badCrc, /chunk IDAT has a bad CRC/],
    [ihdrLater, /does not start with IHDR/],
    [Buffer.concat([good, Buffer.from('junk')]), /data after IEND/],
    [encodePng(64, 64, { extra: [chunk('ABCD', Buffer.from('x'))] }), /unknown critical chunk ABCD/],
    [Buffer.concat([good.subarray(0, 33), chunk('IEND')]), /no image data/],
    [encodePng(0, 64), /empty/],
    [withLength(good, 33, 0xffffffff), /truncated/],
    [Buffer.concat([good.subarray(0, 8), chunk('IHDR', Buffer.concat([good.subarray(16, 29), Buffer.from([0])])), good.subarray(33)]), /does not start with IHDR/],
    [Buffer.concat([good.subarray(0, 33), Buffer.from([0, 0, 0, 0, 0x31, 0x32, 0x33, 0x34, 0, 0, 0, 0]), good.subarray(33)]), /malformed chunk/],
    [withHeader(good, [16, 3]), /colour type 3 with bit depth 16/],
    [withHeader(good, [8, 6, 1]), /unknown method/],
    [withHeader(good, [8, 6, 0, 0, 2]), /unknown method/],
  ];
  for (const [bytes, message] of cases) assert.throws(() => readPng(bytes), { name: 'PngError', message }, String(message));
});

/** readPng, then checkImageData, as the service does (after its size check). */
const check = (bytes: Buffer): Buffer => checkImageData(readPng(bytes));
const refuses = (bytes: Buffer, message: RegExp, what = String(message)): void => assert.throws(() => check(bytes), { name: 'PngError', message }, what);

test('reads the header fields and the image data of every IDAT chunk, joined', () => {
  const h: ImageHeader = { width: 5, height: 3, depth: 16, colour: 4, interlace: 1 };
  const data = deflateSync(scanlines(h).data);
  const read = readPng(encodeImage(h, [data.subarray(0, 4), Buffer.alloc(0), data.subarray(4)]));
  assert.deepEqual([read.depth, read.colour, read.interlace], [16, 4, 1]);
  assert.deepEqual(read.imageData, data);
  checkImageData(read);
});

test('accepts real images of every colour type, bit depth and interlace method', () => {
  const kinds: [string, ImageHeader, Buffer[]][] = [
    ['RGBA 8', { width: 64, height: 64 }, []],
    ['RGBA 16', { width: 64, height: 32, depth: 16 }, []],
    ['RGB 8', { width: 7, height: 3, colour: 2 }, []],
    ['RGB 16', { width: 7, height: 3, colour: 2, depth: 16 }, []],
    ['grey + alpha 16', { width: 9, height: 2, colour: 4, depth: 16 }, []],
    ...[1, 2, 4, 8, 16].map((depth): [string, ImageHeader, Buffer[]] => [`grey ${depth}`, { width: 13, height: 5, colour: 0, depth }, []]),
    ...[1, 2, 4, 8].map((depth): [string, ImageHeader, Buffer[]] => [`palette ${depth}`, { width: 13, height: 5, colour: 3, depth }, [plte(1 << depth)]]),
    ['palette with tRNS', { width: 64, height: 64, colour: 3 }, [plte(3), chunk('tRNS', Buffer.from([0, 128, 255]))]],
  ];
  // Interlaced too, including sizes where some of Adam7's passes are empty (1×1 has only the first).
  for (const [what, h, extra] of [...kinds]) kinds.push([`${what}, interlaced`, { ...h, interlace: 1 }, extra]);
  for (const [width, height] of [[1, 1], [2, 1], [1, 2], [3, 5], [5, 3], [8, 8], [9, 9], [64, 64]]) {
    kinds.push([`${width}×${height} interlaced`, { width, height, interlace: 1 }, []]);
  }
  for (const [what, h, extra] of kinds) assert.doesNotThrow(() => check(imagePng(h, extra)), what);
  assert.doesNotThrow(() => check(encodePng(64, 64, { seed: 3 })), 'the shared fixture');
  assert.doesNotThrow(() => check(randomPng(64, 64)), 'stored, not compressed');
  // The image data may be cut into IDAT chunks anywhere, some empty.
  const h = { width: 64, height: 64 };
  const data = deflateSync(scanlines(h).data);
  assert.doesNotThrow(() => check(encodeImage(h, [data.subarray(0, 1), Buffer.alloc(0), data.subarray(1, 100), data.subarray(100)])), 'split IDAT');
});

test('refuses image data that is not a zlib stream, or not all of one', () => {
  const h = { width: 64, height: 64 };
  const raw = scanlines(h).data;
  const badCheck = deflateSync(raw);
  badCheck[badCheck.length - 1]! ^= 0xff; // the Adler-32 of the zlib trailer
  const dictionary = deflateSync(raw, { dictionary: Buffer.from('a preset dictionary, which PNG forbids') });
  for (const [what, data] of [
    ['random bytes', randomBytes(500)],
    ['raw deflate, no zlib header', deflateRawSync(raw)],
    ['gzip', gzipSync(raw)],
    ['the pixels themselves', raw],
    ['a bad Adler-32', badCheck],
    ['a preset dictionary', dictionary],
  ] as const) {
    refuses(encodeImage(h, data), /^the PNG image data is not zlib$/, what);
  }
  const whole = deflateSync(raw);
  refuses(encodeImage(h, whole.subarray(0, whole.length - 10)), /^the PNG image data is cut short$/, 'a stream cut before its end');
  refuses(encodeImage(h, whole.subarray(0, 2)), /^the PNG image data is cut short$/, 'only the zlib header');
});

test('refuses image data that decodes to fewer or more bytes than the header implies', () => {
  const h = { width: 64, height: 64 };
  const raw = scanlines(h).data;
  assert.equal(raw.length, 64 * (1 + 64 * 4));
  refuses(encodeImage(h, deflateSync(raw.subarray(0, -257))), /^the PNG image data decodes to 16191 bytes, not the 16448 its size implies$/, 'a row short');
  refuses(encodeImage(h, deflateSync(raw.subarray(0, -1))), /^the PNG image data decodes to 16447 bytes, not the 16448 its size implies$/, 'a byte short');
  refuses(encodeImage(h, deflateSync(Buffer.concat([raw, Buffer.alloc(1)]))), /^the PNG image data decodes to more than the 16448 bytes its size implies$/, 'a byte more');
  // The same pixels under another header: 16 bits, grey, or interlaced, each a different size.
  refuses(encodeImage({ ...h, depth: 16 }, deflateSync(raw)), /decodes to 16448 bytes, not the 32832 its size implies/, '8-bit data, 16-bit header');
  refuses(encodeImage({ ...h, colour: 0 }, deflateSync(raw)), /decodes to more than the 4160 bytes/, 'RGBA data, grey header');
  // Adam7 adds a filter byte for each row of each pass: 120 rows instead of 64.
  refuses(encodeImage({ ...h, interlace: 1 }, deflateSync(raw)), /decodes to 16448 bytes, not the 16504 its size implies/, 'plain data, interlaced header');
  refuses(encodeImage(h, deflateSync(scanlines({ ...h, interlace: 1 }).data)), /decodes to more than the 16448 bytes/, 'interlaced data, plain header');
  // Bit depths under 8 pad each row to a whole byte: 13 pixels of 1 bit are 2 bytes.
  const packed = { width: 13, height: 5, colour: 0, depth: 1 };
  refuses(encodeImage(packed, deflateSync(Buffer.alloc(5 * 3 - 1))), /decodes to 14 bytes, not the 15 its size implies/, 'unpadded rows');
});

test('refuses a scanline whose filter type is not 0 to 4, in any row or pass', () => {
  const withFilter = (h: ImageHeader, row: number | 'last', filter: number): Buffer => {
    const { data, rows } = scanlines(h);
    data[rows.at(row === 'last' ? -1 : row)!] = filter;
    return encodeImage(h, deflateSync(data), h.colour === 3 ? [plte()] : []);
  };
  const h = { width: 64, height: 64 };
  refuses(withFilter(h, 0, 5), /^the PNG image row 1 has an unknown filter type 5$/);
  refuses(withFilter(h, 6, 9), /^the PNG image row 7 has an unknown filter type 9$/);
  refuses(withFilter(h, 'last', 255), /^the PNG image row 64 has an unknown filter type 255$/);
  refuses(withFilter({ width: 13, height: 5, colour: 3, depth: 1 }, 'last', 5), /^the PNG image row 5 has an unknown filter type 5$/);
  // Interlaced 64×64: passes of 8, 8, 8, 16, 16, 32 and 32 rows.
  const a = { ...h, interlace: 1 };
  refuses(withFilter(a, 0, 5), /^the PNG image row 1 of pass 1 has an unknown filter type 5$/);
  refuses(withFilter(a, 8, 5), /^the PNG image row 1 of pass 2 has an unknown filter type 5$/);
  refuses(withFilter(a, 8 + 8 + 8 + 16 + 3, 6), /^the PNG image row 4 of pass 5 has an unknown filter type 6$/);
  refuses(withFilter(a, 'last', 200), /^the PNG image row 32 of pass 7 has an unknown filter type 200$/);
  // Passes are named as Adam7 numbers them, empty ones included: a 1×8 image has only 1, 3, 5 and 7.
  refuses(withFilter({ width: 1, height: 8, interlace: 1 }, 1, 5), /^the PNG image row 1 of pass 3 has an unknown filter type 5$/);
  refuses(withFilter({ width: 1, height: 8, interlace: 1 }, 'last', 5), /^the PNG image row 4 of pass 7 has an unknown filter type 5$/);
  // A 1×1 interlaced image has one pass: its only scanline.
  refuses(withFilter({ width: 1, height: 1, interlace: 1 }, 0, 5), /^the PNG image row 1 of pass 1 has an unknown filter type 5$/);
  // All five types are fine: the fixtures' rows cycle through them.
  assert.deepEqual(new Set(scanlines(h).rows.map((at) => scanlines(h).data[at])), new Set([0, 1, 2, 3, 4]));
  assert.doesNotThrow(() => check(withFilter(h, 'last', 4)));
});

test('refuses an image with no image data bytes, or whose data decodes to nothing', () => {
  const h = { width: 64, height: 64 };
  refuses(encodeImage(h, Buffer.alloc(0)), /^the PNG image data is empty$/, 'one empty IDAT');
  refuses(encodeImage(h, [Buffer.alloc(0), Buffer.alloc(0)]), /^the PNG image data is empty$/, 'two empty IDATs');
  refuses(encodeImage(h, deflateSync(Buffer.alloc(0))), /^the PNG image data is empty$/, 'a zlib stream of nothing');
});

test('refuses a palette image without a PLTE chunk before its image data (spec 11.2.3)', () => {
  const h = { width: 64, height: 64, colour: 3 };
  const data = deflateSync(scanlines(h).data);
  assert.throws(() => readPng(encodeImage(h, data)), { name: 'PngError', message: /^the PNG palette image has no PLTE chunk before its image data$/ });
  const late = Buffer.concat([encodeImage(h, data).subarray(0, -12), plte(), chunk('IEND')]);
  assert.throws(() => readPng(late), { name: 'PngError', message: /no PLTE chunk/ }, 'PLTE after IDAT');
  assert.doesNotThrow(() => check(encodeImage(h, data, [plte()])));
  // Other colour types need none.
  assert.doesNotThrow(() => check(imagePng({ width: 8, height: 8, colour: 2 })));
});

test('a small file that inflates to 200 MiB is refused quickly, without allocating it', async () => {
  const bomb = encodeImage({ width: 64, height: 64 }, await zlibZeros(200 * 1024 * 1024));
  assert.ok(bomb.length < 300 * 1024, `the bomb is ${bomb.length} bytes`);
  const png = readPng(bomb);
  globalThis.gc?.();
  const rss = process.memoryUsage().rss;
  const start = performance.now();
  assert.throws(() => checkImageData(png), { name: 'PngError', message: /^the PNG image data decodes to more than the 16448 bytes its size implies$/ });
  const ms = performance.now() - start;
  const grown = process.memoryUsage().rss - rss;
  assert.ok(grown < 64 * 1024 * 1024, `RSS grew by ${Math.round(grown / 1024 / 1024)} MiB`);
  assert.ok(ms < 1000, `took ${Math.round(ms)} ms`);
});

test('a header implying more than MAX_IMAGE_DATA_BYTES is refused before anything is inflated', async () => {
  // 60000×60000 would pass no texture size check; this bound holds even for a caller that forgot it.
  const huge = readPng(encodeImage({ width: 60000, height: 60000 }, await zlibZeros(200 * 1024 * 1024)));
  const rss = process.memoryUsage().rss;
  assert.throws(() => checkImageData(huge), { name: 'PngError', message: /^the PNG image is too big to decode \(14400060000 bytes\)$/ });
  assert.ok(process.memoryUsage().rss - rss < 64 * 1024 * 1024);
  // The biggest HD texture (1024×1024, 16-bit RGBA, interlaced) is under the bound, and checks.
  const biggest: ImageHeader = { width: 1024, height: 1024, depth: 16, interlace: 1 };
  assert.ok(scanlines(biggest).data.length <= MAX_IMAGE_DATA_BYTES);
  assert.doesNotThrow(() => check(imagePng(biggest)));
});
