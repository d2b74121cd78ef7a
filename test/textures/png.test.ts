import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32, readPng } from '../../src/textures/png.ts';
import { chunk, encodePng } from '../helpers/png.ts';

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
