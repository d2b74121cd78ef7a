// Hosted skins and capes: `user skin` / `user cape` store a real PNG of the right size (64×64 or
// 64×32 skins, 64×32 capes, whole multiples only with --hd-textures, at most 1 MiB as received)
// and refuse anything else with exit status 1 and a message that says what is wrong. Only the
// image chunks are kept (no tEXt, no time, no other metadata), named by the texture hash of their
// pixels; one image worn by several players is stored once, and removed when no one wears it. The
// model flag is optional. Textures are served at GET/HEAD {base}/textures/{hash} with an ETag,
// immutable caching and 304s, open to game clients even with --api-key; answers carry
// {--public-url}{base}/textures/{hash}; a server without --public-url while hosted textures exist
// starts, says so in one warning, and leaves them out of its answers.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { startServer, startServerOnFreePort, tempDir, runCli, fetchReply } from '../helpers/process.ts';
import { testDb } from '../helpers/test-db.ts';
import type { RunningServer, ProcResult, Reply } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { beforeIend, chunk, encodePng, padTo, pixelsPng, randomPng, sha, specHash, textureName } from '../helpers/png.ts';
import { withStore } from '../helpers/store.ts';
import { assertFail, assertOk, login, join, withoutTimes } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'textures.db');
const MiB = 1024 * 1024;
const KEY = 'texture-api-key-0123456789abcdef';
const ADMIN = 'texture-admin-token-0123456789';
const UNKNOWN_HASH = '0'.repeat(64);

let main: RunningServer; // --public-url = its own address, --admin-token, no --hd-textures
let hd: RunningServer; // --hd-textures, --admin-token, --public-url = its own address
let keyed: RunningServer; // --base-path /mc, --api-key, --public-url https://skins.example.org/
let mainPub = '';
const uuids: Record<string, string> = {};

/** A server on a port of its own whose --public-url is its real address. */
async function startPublic(args: string[]): Promise<[RunningServer, string]> {
  let pub = '';
  const s = await startServerOnFreePort((port) => ['--db', db, ...args, '--public-url', (pub = `http://127.0.0.1:${port}`)]);
  return [s, pub];
}

before(async () => {
  const names = ['Steve', 'Model', 'Shared1', 'Shared2', 'Swapper', 'Clean', 'Palette', 'Nothing', 'Edge', 'HdCli', 'Answers', 'Keyed', 'HdAdmin', 'Recoded1', 'Recoded2', 'Legacy'];
  const ids = await Promise.all(names.map((n) => seedPlayer(db, n, `${n}-password`)));
  names.forEach((n, i) => (uuids[n] = ids[i]!));
  [[main, mainPub], [hd], keyed] = await Promise.all([
    startPublic(['--admin-token', ADMIN]),
    startPublic(['--admin-token', ADMIN, '--hd-textures']),
    startServer(['--db', db, '--base-path', '/mc', '--api-key', KEY, '--public-url', 'https://skins.example.org/']),
  ]);
});

after(async () => {
  await Promise.all([main?.stop(), hd?.stop(), keyed?.stop()]);
  tmp.cleanup();
});


let files = 0;
/** Writes bytes to a new file in the temp folder and returns its path. */
function file(bytes: Buffer, name = `t${++files}.png`): string {
  const path = pathJoin(tmp.dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** `user ARGS --db PATH`. */
const userIn = (path: string, ...args: string[]): Promise<ProcResult> => runCli(['user', ...args, '--db', path]);
/** `user ARGS --db db`. */
const user = (...args: string[]): Promise<ProcResult> => userIn(db, ...args);

function assertDone(r: ProcResult, what: string): void {
  assert.equal(r.code, 0, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

/** Exit status 1 and exactly `message` as a line of stderr. */
function assertRefused(r: ProcResult, message: string | RegExp, what: string): void {
  assert.equal(r.code, 1, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const lines = r.stderr.split('\n');
  if (typeof message === 'string') assert.ok(lines.includes(message), `${what}: expected the line "${message}" on stderr:\n${r.stderr}`);
  else assert.ok(lines.some((l) => message.test(l)), `${what}: expected a line matching ${message} on stderr:\n${r.stderr}`);
  assert.ok(!/^\s{4}at /m.test(r.stderr), `${what}: stack trace on stderr:\n${r.stderr}`);
}

/** The /profile answer of a player on the main server. */
async function profile(name: string, s: RunningServer = main, prefix = '', headers: Record<string, string> = {}): Promise<any> {
  return assertOk(
    await s.request(`${prefix}/profile`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ userUUID: uuids[name] }) }),
  );
}

/** GET (or HEAD) a texture as bytes. */
async function getTexture(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function assertGone(hash: string, what: string): Promise<void> {
  const r = await main.request(`/textures/${hash}`);
  assert.equal(r.status, 404, `${what}: still served (${r.status})`);
  assertFail(r, 404, 'Unknown texture');
}

async function assertServed(hash: string, expected: Buffer, what: string): Promise<void> {
  const r = await getTexture(`${main.url}/textures/${hash}`);
  assert.equal(r.status, 200, `${what}: status ${r.status}`);
  assert.ok(r.bytes.equals(expected), `${what}: the served bytes differ`);
}

/** A palette image (colour type 3) with PLTE and tRNS, both of which must be kept. */
function palettePng(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 3;
  const rows = Buffer.alloc((width + 1) * height);
  for (let i = 0; i < rows.length; i++) rows[i] = i % (width + 1) === 0 ? 0 : i % 3;
  return Buffer.concat([
    encodePng(1, 1).subarray(0, 8),
    chunk('IHDR', ihdr),
    chunk('PLTE', Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255])),
    chunk('tRNS', Buffer.from([0, 128, 255])),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND'),
  ]);
}

/** The PNG with `extra` chunks put just before IEND (after the image data). */

/** Checks `png` is a well-formed PNG on its own terms (independently of the service) and returns its chunk types. */
function checkPng(png: Buffer): string[] {
  assert.ok(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'PNG signature');
  const types: string[] = [];
  const idat: Buffer[] = [];
  let at = 8;
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    assert.ok(at + 12 + length <= png.length, `chunk ${type} runs past the end`);
    assert.equal(crc32(png.subarray(at + 4, at + 8 + length)), png.readUInt32BE(at + 8 + length), `CRC of ${type}`);
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    types.push(type);
    at += 12 + length;
  }
  assert.equal(at, png.length);
  assert.equal(types[0], 'IHDR');
  assert.equal(types.at(-1), 'IEND');
  // The image data still decodes to the size the header gives.
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const bytesPerPixel = png[25] === 6 ? 4 : 1;
  assert.equal(inflateSync(Buffer.concat(idat)).length, (width * bytesPerPixel + 1) * height, 'decoded image size');
  return types;
}

/** The first bytes of a JPEG (JFIF) file and its end marker. */
const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
  Buffer.from('JFIF\0', 'latin1'),
  Buffer.from([0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
  randomBytes(600),
  Buffer.from([0xff, 0xd9]),
]);

describe('user skin and user cape', () => {
  test('a valid skin and cape are stored and the answers carry {public-url}/textures/{hash}', async () => {
    const skin = encodePng(64, 64, { seed: 1 });
    const cape = encodePng(64, 32, { seed: 2 });
    assertDone(await user('skin', 'Steve', file(skin)), 'user skin');
    assertDone(await user('cape', 'steve', file(cape)), 'user cape (name in another case)');
    const p = await profile('Steve');
    assert.deepEqual(p, { username: 'Steve', isAlex: false, skinUrl: `${mainPub}/textures/${textureName(skin)}`, capeUrl: `${mainPub}/textures/${textureName(cape)}` });
    await assertServed(textureName(skin), skin, 'skin');
    await assertServed(textureName(cape), cape, 'cape');
    // The older 64×32 skin format is a skin too.
    const old = encodePng(64, 32, { seed: 3 });
    assertDone(await user('skin', 'Steve', file(old)), 'a 64×32 skin');
    assert.equal((await profile('Steve')).skinUrl, `${mainPub}/textures/${textureName(old)}`);
  });

  test('--slim and --classic are optional: left out, the model stays (classic for a first skin)', async () => {
    const model = async (): Promise<boolean> => (await profile('Model')).isAlex;
    assertDone(await user('skin', 'Model', file(encodePng(64, 64, { seed: 10 }))), 'first skin, no flag');
    assert.equal(await model(), false, 'a first skin without a flag is classic');
    assertDone(await user('skin', 'Model', file(encodePng(64, 64, { seed: 11 })), '--slim'), '--slim');
    assert.equal(await model(), true);
    assertDone(await user('skin', 'Model', file(encodePng(64, 64, { seed: 12 }))), 'a new skin, no flag');
    assert.equal(await model(), true, 'the slim model stays when no flag is given');
    assertDone(await user('skin', 'Model', file(encodePng(64, 64, { seed: 13 })), '--classic'), '--classic');
    assert.equal(await model(), false);
    assertDone(await user('skin', 'Model', file(encodePng(64, 64, { seed: 14 }))), 'again, no flag');
    assert.equal(await model(), false, 'the classic model stays when no flag is given');
    // A cape leaves the model alone.
    assertDone(await user('skin', 'Model', file(encodePng(64, 64, { seed: 14 })), '--slim'), '--slim again');
    assertDone(await user('cape', 'Model', file(encodePng(64, 32, { seed: 15 }))), 'a cape');
    assert.equal(await model(), true);
    const both = await user('skin', 'Model', file(encodePng(64, 64, { seed: 16 })), '--slim', '--classic');
    assert.equal(both.code, 2, `--slim with --classic: exit ${both.code}\n${both.stderr}`);
    assert.equal((await profile('Model')).skinUrl, `${mainPub}/textures/${textureName(encodePng(64, 64, { seed: 14 }))}`, 'the refused command changed the skin');
  });

  test('refusals exit 1 with a message that says what is wrong, and store nothing', async () => {
    const good = encodePng(64, 64, { seed: 20 });
    const badCrc = Buffer.from(good);
    badCrc[badCrc.length - 13]! ^= 0xff; // the last byte of the IDAT chunk's CRC
    const badData = Buffer.from(good);
    badData[33 + 8 + 2]! ^= 0x01; // a byte of IDAT's data: its CRC no longer matches
    const over = padTo(encodePng(64, 64, { seed: 21 }), MiB + 1);
    const cases: [string, string[], string | RegExp][] = [
      ['a bad CRC', ['skin', 'Nothing', file(badCrc)], 'skin: the PNG chunk IDAT has a bad CRC'],
      ['changed image data', ['skin', 'Nothing', file(badData)], 'skin: the PNG chunk IDAT has a bad CRC'],
      ['a truncated file', ['skin', 'Nothing', file(good.subarray(0, Math.floor(good.length / 2)))], 'skin: the PNG file is truncated'],
      ['a file cut before IEND', ['cape', 'Nothing', file(encodePng(64, 32, { seed: 22 }).subarray(0, -12))], 'cape: the PNG file is truncated'],
      ['a JPEG renamed to .png', ['skin', 'Nothing', file(JPEG, 'photo.png')], 'skin: not a PNG file'],
      ['an empty file', ['cape', 'Nothing', file(Buffer.alloc(0))], 'cape: not a PNG file'],
      ['a 128×128 cape', ['cape', 'Nothing', file(encodePng(128, 128))], 'cape must be 64×32, got 128×128'],
      ['a 64×64 cape', ['cape', 'Nothing', file(encodePng(64, 64))], 'cape must be 64×32, got 64×64'],
      ['a 100×100 skin', ['skin', 'Nothing', file(encodePng(100, 100))], 'skin must be 64×64 or 64×32, got 100×100'],
      ['a 128×128 skin without --hd-textures', ['skin', 'Nothing', file(encodePng(128, 128))], 'skin must be 64×64 or 64×32, got 128×128'],
      ['a 96×96 skin even with --hd-textures', ['skin', 'Nothing', file(encodePng(96, 96)), '--hd-textures'], 'skin must be 64×64 or 64×32 (or a whole multiple up to 16 times), got 96×96'],
      ['a 128×128 cape even with --hd-textures', ['cape', 'Nothing', file(encodePng(128, 128)), '--hd-textures'], 'cape must be 64×32 (or a whole multiple up to 16 times), got 128×128'],
      ['1 MiB + 1 byte', ['skin', 'Nothing', file(over)], `a texture must be at most ${MiB} bytes, got ${MiB + 1}`],
      ['a 3 MiB file', ['skin', 'Nothing', file(padTo(encodePng(64, 64, { seed: 23 }), 3 * MiB))], new RegExp(`^a texture must be at most ${MiB} bytes`)],
      ['a missing file', ['skin', 'Nothing', pathJoin(tmp.dir, 'missing.png')], /cannot read .*missing\.png/],
      ['an unknown player', ['skin', 'Nobody', file(good)], 'No player named "Nobody"'],
    ];
    const results = await Promise.all(cases.map(([, args]) => user(...args)));
    cases.forEach(([what, , message], i) => assertRefused(results[i]!, message, what));
    // Nothing was stored for anyone: the player has no textures, and none of the images is served.
    assert.deepEqual(await profile('Nothing'), { username: 'Nothing' });
    for (const png of [good, over, encodePng(128, 128), encodePng(100, 100), encodePng(64, 64)]) await assertGone(textureName(png), 'a refused image');
  });

  test('exactly 1 MiB as received is accepted; the limit counts the upload before metadata is dropped', async () => {
    const image = encodePng(64, 64, { seed: 30 });
    assertDone(await user('skin', 'Edge', file(padTo(image, MiB))), '1 MiB exactly');
    assert.equal((await profile('Edge')).skinUrl, `${mainPub}/textures/${textureName(image)}`);
    await assertServed(textureName(image), image, 'the image without its padding');
  });

  test('a 128×128 skin and a 128×64 cape are accepted with --hd-textures', async () => {
    const skin = encodePng(128, 128, { seed: 40 });
    const cape = encodePng(128, 64, { seed: 41 });
    assertDone(await user('skin', 'HdCli', file(skin), '--hd-textures'), 'HD skin');
    assertDone(await user('cape', 'HdCli', file(cape), '--hd-textures'), 'HD cape');
    const p = await profile('HdCli');
    assert.equal(p.skinUrl, `${mainPub}/textures/${textureName(skin)}`);
    assert.equal(p.capeUrl, `${mainPub}/textures/${textureName(cape)}`);
    await assertServed(textureName(skin), skin, 'HD skin');
  });

  test('a PNG with tEXt (and other metadata) is served without it, as a valid PNG of the image chunks', async () => {
    const image = encodePng(64, 64, { seed: 50 });
    const secret = 'my secret note 7f3a';
    const text = chunk('tEXt', Buffer.from(`Comment\0${secret}`, 'latin1'));
    const time = chunk('tIME', Buffer.from([0x07, 0xe8, 1, 2, 3, 4, 5]));
    const itxt = chunk('iTXt', Buffer.from(`Author\0\0\0\0\0${secret} itxt`, 'utf8'));
    const phys = chunk('pHYs', Buffer.from([0, 0, 0x0b, 0x13, 0, 0, 0x0b, 0x13, 1]));
    const uploaded = beforeIend(encodePng(64, 64, { seed: 50, extra: [text, time, phys] }), [itxt, chunk('tEXt', Buffer.from(`Title\0${secret} late`, 'latin1'))]);
    assert.ok(uploaded.includes('tEXt') && uploaded.includes(secret));
    assertDone(await user('skin', 'Clean', file(uploaded)), 'user skin');
    const url = (await profile('Clean')).skinUrl as string;
    assert.equal(url, `${mainPub}/textures/${textureName(image)}`, 'named by its pixels, whatever chunks came with them');
    const served = await getTexture(url);
    assert.equal(served.status, 200);
    for (const gone of ['tEXt', 'iTXt', 'tIME', 'pHYs', secret, 'Comment', 'Author', 'Title']) {
      assert.ok(!served.bytes.includes(gone), `"${gone}" is in the served file`);
    }
    assert.deepEqual(checkPng(served.bytes), ['IHDR', 'IDAT', 'IEND']);
    assert.ok(served.bytes.equals(image));
    assert.equal(textureName(served.bytes), url.slice(-64));
  });

  test('PLTE and tRNS are kept: a palette skin comes back as uploaded', async () => {
    const png = palettePng(64, 64);
    assertDone(await user('skin', 'Palette', file(png)), 'palette skin');
    const url = (await profile('Palette')).skinUrl as string;
    assert.equal(url, `${mainPub}/textures/${textureName(png)}`);
    const served = await getTexture(url);
    assert.ok(served.bytes.equals(png), 'the served palette PNG differs');
    assert.deepEqual(checkPng(served.bytes), ['IHDR', 'PLTE', 'tRNS', 'IDAT', 'IEND']);
  });

  test('one image worn by several players is stored once, and gone once no one wears it', async () => {
    const shared = encodePng(64, 32, { seed: 60 }); // fits both as a skin and as a cape
    const hash = textureName(shared);
    assertDone(await user('skin', 'Shared1', file(shared)), 'Shared1 skin');
    assertDone(await user('skin', 'Shared2', file(shared)), 'Shared2 skin');
    assertDone(await user('cape', 'Shared2', file(shared)), 'Shared2 cape');
    const [a, b] = [await profile('Shared1'), await profile('Shared2')];
    assert.equal(a.skinUrl, `${mainPub}/textures/${hash}`);
    assert.equal(b.skinUrl, a.skinUrl);
    assert.equal(b.capeUrl, a.skinUrl);
    assertDone(await user('set', 'Shared1', '--no-skin'), 'Shared1 --no-skin');
    assert.equal((await profile('Shared1')).skinUrl, undefined);
    await assertServed(hash, shared, 'still worn by Shared2');
    assertDone(await user('set', 'Shared2', '--no-skin'), 'Shared2 --no-skin');
    await assertServed(hash, shared, 'still Shared2 cape');
    assertDone(await user('remove', 'Shared2'), 'user remove Shared2');
    await assertGone(hash, 'no one wears it');
  });

  test('one image saved twice, as RGBA and as an interlaced palette with other filters, is one file at one address, named by its pixels', async () => {
    const colours = [[200, 30, 40, 255], [20, 180, 60, 255], [0, 0, 0, 0], [250, 250, 10, 128]];
    const at = (x: number, y: number): number => (x * 3 + y * 5 + ((x ^ y) & 3)) % 4;
    const h = { width: 64, height: 64 };
    const rgba = pixelsPng(h, (x, y) => colours[at(x, y)]!);
    const palette = [chunk('PLTE', Buffer.from(colours.flatMap((c) => c.slice(0, 3)))), chunk('tRNS', Buffer.from(colours.map((c) => c[3]!)))];
    const indexed = pixelsPng({ ...h, colour: 3, depth: 2, interlace: 1 }, (x, y) => [at(x, y)], palette);
    assert.ok(!rgba.equals(indexed));
    const painted = new Uint8Array(64 * 64 * 4);
    for (let y = 0; y < 64; y++) for (let x = 0; x < 64; x++) painted.set(colours[at(x, y)]!, (y * 64 + x) * 4);
    const hash = specHash(64, 64, painted);
    assertDone(await user('skin', 'Recoded1', file(rgba)), 'the RGBA file');
    assertDone(await user('skin', 'Recoded2', file(indexed)), 'the palette file');
    assert.equal((await profile('Recoded1')).skinUrl, `${mainPub}/textures/${hash}`);
    assert.equal((await profile('Recoded2')).skinUrl, `${mainPub}/textures/${hash}`);
    // The file first stored is the one served.
    await assertServed(hash, rgba, 'one file for both');
  });

  test('a texture hosted before the texture hash, under the SHA-256 of its file, keeps its address', async () => {
    const png = encodePng(64, 64, { seed: 95 });
    const old = sha(png);
    assert.notEqual(old, textureName(png));
    await withStore(db, (store) => store.setTextures(uuids.Legacy!, { upload: { hash: old, png }, skinHash: old }));
    assert.equal((await profile('Legacy')).skinUrl, `${mainPub}/textures/${old}`);
    await assertServed(old, png, 'the texture stored before');
  });

  test('a replaced skin or cape is gone when no one else wears it', async () => {
    const [first, second, cape] = [encodePng(64, 64, { seed: 70 }), encodePng(64, 64, { seed: 71 }), encodePng(64, 32, { seed: 72 })];
    assertDone(await user('skin', 'Swapper', file(first)), 'first');
    assertDone(await user('cape', 'Swapper', file(cape)), 'cape');
    assertDone(await user('skin', 'Swapper', file(second)), 'second');
    await assertGone(textureName(first), 'the replaced skin');
    await assertServed(textureName(second), second, 'the new skin');
    assertDone(await user('set', 'Swapper', '--skin-url', 'https://cdn.example.org/s.png', '--no-cape'), 'external URL, no cape');
    await assertGone(textureName(second), 'a hosted skin replaced by an external URL');
    await assertGone(textureName(cape), 'a cleared cape');
    assert.deepEqual(await profile('Swapper'), { username: 'Swapper', isAlex: false, skinUrl: 'https://cdn.example.org/s.png' });
  });
});

describe('serving textures', () => {
  const png = encodePng(64, 64, { seed: 80 });
  const hash = textureName(png);
  before(async () => assertDone(await user('skin', 'Answers', file(png)), 'user skin'));

  test('GET {base}/textures/{hash}: image/png, ETag, immutable caching, and bytes whose pixels hash to the name', async () => {
    const r = await getTexture(`${main.url}/textures/${hash}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'image/png');
    assert.equal(r.headers.get('etag'), `"${hash}"`);
    assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(r.headers.get('content-length'), String(png.length));
    assert.equal(textureName(r.bytes), hash);
    assert.ok(r.bytes.equals(png));
  });

  test('a matching If-None-Match is 304 without a body; another is 200', async () => {
    for (const tag of [`"${hash}"`, `W/"${hash}"`, `"${UNKNOWN_HASH}", "${hash}"`, '*']) {
      const r = await getTexture(`${main.url}/textures/${hash}`, { headers: { 'if-none-match': tag } });
      assert.equal(r.status, 304, `If-None-Match: ${tag}`);
      assert.equal(r.bytes.length, 0);
      assert.equal(r.headers.get('etag'), `"${hash}"`);
      assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
    for (const tag of [`"${UNKNOWN_HASH}"`, hash, `"${hash.toUpperCase()}"`]) {
      const r = await getTexture(`${main.url}/textures/${hash}`, { headers: { 'if-none-match': tag } });
      assert.equal(r.status, 200, `If-None-Match: ${tag}`);
      assert.ok(r.bytes.equals(png));
    }
  });

  test('HEAD answers the headers without a body', async () => {
    const r = await getTexture(`${main.url}/textures/${hash}`, { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.bytes.length, 0);
    assert.equal(r.headers.get('content-type'), 'image/png');
    assert.equal(r.headers.get('etag'), `"${hash}"`);
    assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(r.headers.get('content-length'), String(png.length));
    const cached = await getTexture(`${main.url}/textures/${hash}`, { method: 'HEAD', headers: { 'if-none-match': `"${hash}"` } });
    assert.equal(cached.status, 304);
    const unknown = await getTexture(`${main.url}/textures/${UNKNOWN_HASH}`, { method: 'HEAD' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.bytes.length, 0);
  });

  test('an unknown or malformed hash is a 404 envelope', async () => {
    const bad = [UNKNOWN_HASH, hash.toUpperCase(), hash.slice(1), `${hash}0`, `${hash.slice(0, 63)}g`, `${hash}.png`, 'x', 'not-a-hash', '%2F'];
    for (const name of bad) {
      const r = await main.request(`/textures/${name}`);
      assert.equal(r.status, 404, `${name}: ${r.status}`);
      assertFail(r, 404, 'Unknown texture');
    }
    assert.equal((await main.request(`/textures/${hash}/x`)).status, 404);
    assert.equal((await main.request(`/textures/${hash}`, { method: 'POST', body: '{}' })).status, 405);
  });

  test('/auth, /hasJoined and /profile answer {public-url}/textures/{hash}', async () => {
    const url = `${mainPub}/textures/${hash}`;
    const auth = await login(main, 'Answers', 'Answers-password');
    assert.equal(auth.skinUrl, url);
    assert.equal(auth.isAlex, false);
    assert.equal(await join(main, auth.accessToken, uuids.Answers!, 'textures-server'), true);
    assert.deepEqual(assertOk(await main.post('/hasJoined', { username: 'Answers', serverID: 'textures-server' })), { userUUID: uuids.Answers, isAlex: false, skinUrl: url });
    assert.deepEqual(await profile('Answers'), { username: 'Answers', isAlex: false, skinUrl: url });
    // The URL is the real address of the file.
    assert.ok((await getTexture(url)).bytes.equals(png));
  });

  test('--base-path /mc: served at /mc/textures/{hash}, answered as {public-url}/mc/textures/{hash}', async () => {
    const h = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const url = `https://skins.example.org/mc/textures/${hash}`;
    assert.equal(assertOk(await keyed.request('/mc/auth', { method: 'POST', headers: h, body: JSON.stringify({ login: 'Answers', password: 'Answers-password' }) })).skinUrl, url);
    const auth = assertOk(await keyed.request('/mc/auth', { method: 'POST', headers: h, body: JSON.stringify({ login: 'Answers', password: 'Answers-password' }) }));
    const joined = await keyed.request('/mc/join', { method: 'POST', headers: h, body: JSON.stringify({ accessToken: auth.accessToken, userUUID: uuids.Answers, serverID: 'mc-server' }) });
    assert.equal(assertOk(joined), true);
    const hasJoined = await keyed.request('/mc/hasJoined', { method: 'POST', headers: h, body: JSON.stringify({ username: 'Answers', serverID: 'mc-server' }) });
    assert.equal(assertOk(hasJoined).skinUrl, url);
    assert.equal((await profile('Answers', keyed, '/mc', h)).skinUrl, url);
    const r = await getTexture(`${keyed.url}/mc/textures/${hash}`);
    assert.equal(r.status, 200);
    assert.ok(r.bytes.equals(png));
  });

  test('texture downloads need no API key when one is set', async () => {
    assertFail(await keyed.post('/mc/profile', { userUUID: uuids.Answers }), 401, 'Missing or wrong API key');
    for (const headers of [{}, { authorization: 'Bearer wrong-key-0123456789abcdef' }]) {
      const get = await getTexture(`${keyed.url}/mc/textures/${hash}`, { headers });
      assert.equal(get.status, 200);
      assert.ok(get.bytes.equals(png));
      const head = await getTexture(`${keyed.url}/mc/textures/${hash}?key=wrong`, { method: 'HEAD', headers });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('etag'), `"${hash}"`);
      assert.equal((await getTexture(`${keyed.url}/mc/textures/${hash}`, { headers: { ...headers, 'if-none-match': `"${hash}"` } })).status, 304);
    }
    assertFail(await keyed.request(`/mc/textures/${UNKNOWN_HASH}`), 404, 'Unknown texture');
  });

  test('--hd-textures on the server: the admin API takes a 128×64 cape; without it, refused', async () => {
    const cape = encodePng(128, 64, { seed: 90 });
    const put = (s: RunningServer): Promise<Reply> =>
      fetchReply(`${s.url}/admin/users/HdAdmin/cape`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'image/png' }, body: cape });
    assertFail(await put(main), 400, 'cape must be 64×32, got 128×64');
    assert.equal(assertOk(await put(hd)).capeUrl, `${hd.url}/textures/${textureName(cape)}`);
    // A 256×256 skin of random pixels: bigger than the 64 KiB JSON limit, under the 1 MiB texture limit.
    const big = randomPng(256, 256);
    assert.ok(big.length > 64 * 1024 && big.length < MiB, `size ${big.length}`);
    const skin = await fetchReply(`${hd.url}/admin/users/HdAdmin/skin?model=slim`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}` }, body: big });
    assert.deepEqual(withoutTimes(assertOk(skin)), {
      name: 'HdAdmin',
      uuid: uuids.HdAdmin,
      isAlex: true,
      skinUrl: `${hd.url}/textures/${textureName(big)}`,
      capeUrl: `${hd.url}/textures/${textureName(cape)}`,
      locked: false,
      lockedAt: null,
      lockReason: null,
    });
    const served = await getTexture(`${main.url}/textures/${textureName(big)}`);
    assert.ok(served.bytes.equals(big));
  });
});

describe('--public-url', () => {
  test('without it, while hosted textures exist, the server starts, warns once naming it, and answers without them', async () => {
    const own = pathJoin(tmp.dir, 'no-public.db');
    await seedPlayer(own, 'Lone', 'lone-password');
    /** The warn lines (level 40) of a log. */
    const warnings = (stdout: string): string[] =>
      stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.level === 40)
        .map((l) => l.msg);
    const startsAndStops = async (what: string): Promise<void> => {
      const s = await startServer(['--db', own]);
      try {
        assert.equal(assertOk(await s.post('/auth', { login: 'Lone', password: 'lone-password' })).username, 'Lone', what);
      } finally {
        await s.stop();
      }
      assert.deepEqual(warnings(s.stdout()), [], `no warning: ${what}`);
    };
    await startsAndStops('no textures yet');
    // The CLI stores textures whatever the server's flags.
    assertDone(await userIn(own, 'skin', 'Lone', file(encodePng(64, 64, { seed: 100 }))), 'user skin');
    // It serves (a refusal to start would make a service manager restart it in a loop), without the skin's address.
    const warned = await startServer(['--db', own]);
    try {
      const auth = assertOk(await warned.post('/auth', { login: 'Lone', password: 'lone-password' }));
      assert.equal(auth.username, 'Lone');
      assert.ok(auth.skinUrl === undefined || auth.skinUrl === null, `no skin URL: ${JSON.stringify(auth)}`);
    } finally {
      await warned.stop();
    }
    const said = warnings(warned.stdout());
    assert.equal(said.length, 1, warned.stdout());
    assert.match(said[0]!, /hosted skins or capes.*--public-url/);
    // With it, the same database serves.
    const withUrl = await startServer(['--db', own, '--public-url', 'https://auth.example.org']);
    try {
      assert.equal(assertOk(await withUrl.post('/auth', { login: 'Lone', password: 'lone-password' })).skinUrl, `https://auth.example.org/textures/${textureName(encodePng(64, 64, { seed: 100 }))}`);
    } finally {
      await withUrl.stop();
    }
    assert.deepEqual(warnings(withUrl.stdout()), [], 'no warning with --public-url');
    assertDone(await userIn(own, 'set', 'Lone', '--no-skin'), 'user set --no-skin');
    await startsAndStops('the last texture is gone');
  });
});
