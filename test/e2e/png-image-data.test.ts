// The image data of an uploaded skin or cape is inflated and checked (issue 11): it must be a zlib
// stream that decodes to exactly the scanlines the header implies, each with a filter type 0 to 4,
// and a palette image needs its PLTE. Inflating is bounded by that size, so a small file that
// inflates to hundreds of MiB is refused at once; and it happens only after the size check, so a
// header claiming 60000×60000 is refused for its size. Both ways in, the admin API (400) and the
// CLI (exit 1), refuse with the same message and store nothing; real images are still accepted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { deflateSync } from 'node:zlib';
import { startServerOnFreePort, tempDir, runCli } from '../helpers/process.ts';
import type { RunningServer, ProcResult, Reply } from '../helpers/process.ts';
import { encodeImage, encodePng, imagePng, pixelsPng, plte, scanlines, specHash, textureName, zlibZeros } from '../helpers/png.ts';
import { assertFail, assertOk } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'png-data.db');
const ADMIN = 'png-data-admin-token-0123456789';
const MiB = 1024 * 1024;

let server: RunningServer;
let pub = '';

before(async () => {
  server = await startServerOnFreePort((port) => ['--db', db, '--admin-token', ADMIN, '--public-url', (pub = `http://127.0.0.1:${port}`)]);
  for (const name of ['ApiPlayer', 'CliPlayer']) assertOk(await admin('POST', '/admin/users', JSON.stringify({ name, password: 'correct-horse-1' }), 'application/json'));
});

after(async () => {
  await server?.stop();
  tmp.cleanup();
});

function admin(method: string, path: string, body?: Buffer | string, type = 'image/png'): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` };
  if (body !== undefined) headers['content-type'] = type;
  return server.request(path, { method, headers, body });
}

/** How many textures the database holds. */
function storedTextures(): number {
  const read = new DatabaseSync(db, { readOnly: true });
  try {
    return Number((read.prepare('SELECT count(*) AS n FROM textures').get() as { n: number }).n);
  } finally {
    read.close();
  }
}

let files = 0;
/** `user KIND NAME FILE --db db`, the PNG written to a new file. */
function cli(kind: 'skin' | 'cape', name: string, png: Buffer): Promise<ProcResult> {
  const file = pathJoin(tmp.dir, `upload-${++files}.png`);
  writeFileSync(file, png);
  return runCli(['user', kind, name, file, '--db', db], { timeoutMs: 60_000 });
}

function assertRefused(r: ProcResult, message: string, what: string): void {
  assert.equal(r.code, 1, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.ok(r.stderr.split('\n').includes(message), `${what}: expected the line "${message}" on stderr:\n${r.stderr}`);
  assert.ok(!/^\s{4}at /m.test(r.stderr), `${what}: stack trace on stderr:\n${r.stderr}`);
}

/** A 64×64 RGBA skin whose seventh scanline has filter type 9. */
function badFilterPng(): Buffer {
  const h = { width: 64, height: 64 };
  const { data, rows } = scanlines(h);
  data[rows[6]!] = 9;
  return encodeImage(h, deflateSync(data));
}

test('the admin API and the CLI refuse image data that is not a real image, saying why, and store nothing', async () => {
  const zeros = await zlibZeros(200 * MiB);
  const bomb = encodeImage({ width: 64, height: 64 }, zeros);
  assert.ok(bomb.length < MiB, `the bomb (${bomb.length} bytes) must pass the upload limit to reach the check`);
  const skin = { width: 64, height: 64 };
  const cases: [string, 'skin' | 'cape', Buffer, string][] = [
    ['a bomb: 200 MiB of zeros in a 64×64 skin', 'skin', bomb, 'skin: the PNG image data decodes to more than the 16448 bytes its size implies'],
    ['a bad filter type', 'skin', badFilterPng(), 'skin: the PNG image row 7 has an unknown filter type 9'],
    ['image data that is not zlib', 'skin', encodeImage(skin, scanlines(skin).data), 'skin: the PNG image data is not zlib'],
    ['a cape a row short', 'cape', encodeImage({ width: 64, height: 32 }, deflateSync(scanlines({ width: 64, height: 31 }).data)), 'cape: the PNG image data decodes to 7967 bytes, not the 8224 its size implies'],
    ['a palette skin without PLTE', 'skin', imagePng({ ...skin, colour: 3 }), 'skin: the PNG palette image has no PLTE chunk before its image data'],
    ['empty image data', 'skin', encodeImage(skin, Buffer.alloc(0)), 'skin: the PNG image data is empty'],
    // The size check comes first: this header never sets the bound for inflating.
    ['a bomb claiming 60000×60000', 'skin', encodeImage({ width: 60000, height: 60000 }, zeros), 'skin must be 64×64 or 64×32, got 60000×60000'],
  ];
  for (const [what, kind, png, message] of cases) {
    const started = performance.now();
    assertFail(await admin('PUT', `/admin/users/ApiPlayer/${kind}`, png), 400, message);
    assertRefused(await cli(kind, 'CliPlayer', png), message, what);
    assert.ok(performance.now() - started < 20_000, `${what}: took ${Math.round(performance.now() - started)} ms`);
  }
  for (const name of ['ApiPlayer', 'CliPlayer']) {
    const user = assertOk(await admin('GET', `/admin/users/${name}`));
    assert.deepEqual([user.skinUrl, user.capeUrl], [null, null], `${name} was given a refused texture`);
  }
  assert.equal(storedTextures(), 0, 'a refused image is stored');
  // The server is still there and answers.
  assert.equal(assertOk(await admin('GET', '/admin/users/ApiPlayer')).name, 'ApiPlayer');
});

test('real images are still accepted both ways: RGBA, palette with PLTE, 16-bit, interlaced; each named by the texture hash of its pixels', async () => {
  /** 8-bit RGBA pixels, row by row, from each one's colour. */
  const painted = (width: number, height: number, colour: (x: number, y: number) => number[]): Uint8Array => {
    const out = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) out.set(colour(x, y), (y * width + x) * 4);
    return out;
  };
  const rgba16 = (x: number, y: number): number[] => [x * 4, y * 8, (x + y) * 2, 255];
  const accepted: ['skin' | 'cape', Buffer, string][] = [
    ['skin', encodePng(64, 64, { seed: 7 }), textureName(encodePng(64, 64, { seed: 7 }))],
    // Random indices, every filter type: plte(16) gives every index one grey.
    ['skin', imagePng({ width: 64, height: 64, colour: 3, depth: 4, interlace: 1 }, [plte(16)]), specHash(64, 64, painted(64, 64, () => [0x7f, 0x7f, 0x7f, 255]))],
    // 16 bits whose values are 257 times an 8-bit one: they hash as that one.
    ['cape', pixelsPng({ width: 64, height: 32, depth: 16 }, (x, y) => rgba16(x, y).map((v) => v * 257)), specHash(64, 32, painted(64, 32, rgba16))],
    ['cape', pixelsPng({ width: 64, height: 32, colour: 0, depth: 1, interlace: 1 }, (x, y) => [(x * y) % 2]), specHash(64, 32, painted(64, 32, (x, y) => ((x * y) % 2 ? [255, 255, 255, 255] : [0, 0, 0, 255])))],
  ];
  for (const [kind, png, name] of accepted) {
    const url = `${pub}/textures/${name}`;
    assert.equal(assertOk(await admin('PUT', `/admin/users/ApiPlayer/${kind}`, png))[`${kind}Url`], url, `admin API ${kind}`);
    const r = await cli(kind, 'CliPlayer', png);
    assert.equal(r.code, 0, `CLI ${kind}: exit ${r.code}\n${r.stderr}`);
    assert.equal(assertOk(await admin('GET', '/admin/users/CliPlayer'))[`${kind}Url`], url, `CLI ${kind}`);
    const served = await fetch(url);
    assert.equal(served.status, 200);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(png), 'the served image differs');
  }
});
