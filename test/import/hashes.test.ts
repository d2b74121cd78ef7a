// The foreign hash formats through their public face: recognizeHash, foreignFormatOf and
// verifyForeignHash, against published vectors (bcrypt and phpass in depth: bcrypt.test.ts,
// phpass.test.ts; their workers: hash-worker.test.ts).
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ARGON2_MAX_MEMORY_KIB, runtimeArgon2, verifyArgon2 } from '../../src/import/hashes/argon2.ts';
import { DRASL_SCRYPT } from '../../src/import/hashes/drasl-scrypt.ts';
import { UnsupportedHashError } from '../../src/import/hashes/errors.ts';
import { foreignFormatOf, recognizeHash, verifyForeignHash, type ForeignFormat } from '../../src/import/hashes/formats.ts';
import { PBKDF2_MAX_ITERATIONS } from '../../src/import/hashes/pbkdf2.ts';
import { startHashWorkers } from '../../src/import/hashes/worker.ts';
import { ROOT, runProc } from '../helpers/process.ts';

const workers = startHashWorkers(2);
after(() => workers.close());

const verify = (password: string, stored: string): Promise<boolean> => verifyForeignHash(password, stored, workers);

/** Recognised as `format` and kept exactly; the right password verifies and a wrong one does not. */
async function assertVectors(format: ForeignFormat, vectors: [string, string][]): Promise<void> {
  for (const [password, hash] of vectors) {
    assert.deepEqual(recognizeHash(hash), { format, stored: hash }, hash);
    assert.equal(foreignFormatOf(hash), format, hash);
    assert.equal(await verify(password, hash), true, hash);
    assert.equal(await verify(`${password}x`, hash), false, hash);
  }
}

function assertProblems(cases: [string, RegExp][]): void {
  for (const [hash, problem] of cases) {
    const result = recognizeHash(hash);
    assert.ok('problem' in result, `accepted: ${hash}`);
    assert.match(result.problem, problem, hash);
    assert.equal(foreignFormatOf(hash), undefined, hash);
  }
}

test('bcrypt and phpass are recognised and verified in the workers', async () => {
  await assertVectors('bcrypt', [
    ['U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'], // crypt_blowfish wrapper.c
    ['t\u00e1\u0411\u2113\u0259', '$2b$05$Z17AXnnlpzddNUvnC6cZNOSwMA/8oNiKnHTHTwLlBijfucQQlHjaG'], // passlib
  ]);
  await assertVectors('phpass', [['test12345', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0']]); // Openwall phpass test.php
  assertProblems([['$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e', /CVE-2011-2483/]]);
});

test("XenForo's PHP-serialized bcrypt is unwrapped to the bare bcrypt string", async () => {
  const bare = '$2a$10$UtuON/ZG.x8EWG/zQbryB.BHfQVrfxk3H7qykzP.UJQ8YiLjZyfqq'; // AuthMe XfBCryptTest.java: "password"
  const wrapped = `a:1:{s:4:"hash";s:60:"${bare}";}`;
  assert.deepEqual(recognizeHash(wrapped), { format: 'bcrypt', stored: bare });
  assert.equal(foreignFormatOf(wrapped), undefined, 'only the unwrapped string is stored');
  assert.equal(await verify('password', bare), true);
  assert.equal(await verify('Password', bare), false);
  assertProblems([
    [`a:1:{s:4:"hash";s:59:"${bare}";}`, /declares a length other than its own/],
    ['a:1:{s:4:"hash";s:5:"12345";}', /XenForo hash: unknown hash format/],
    ['a:1:{s:4:"hash";s:34:"$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0";}', /XenForo hash is not bcrypt/],
    ['a:3:{s:4:"hash";s:64:"0f";s:4:"salt";s:2:"ab";s:8:"hashFunc";s:6:"sha256";}', /PHP-serialized hash other than XenForo's bcrypt/],
  ]);
});

test("AuthMe's $SHA$: hex(SHA-256(hex(SHA-256(password)) + salt))", async () => {
  // AuthMe, Sha256Test.java.
  await assertVectors('authme-sha256', [
    ['password', '$SHA$11aa0706173d7272$dbba96681c2ae4e0bfdf226d70fbbc5e4ee3d8071faa613bc533fe8a64817d10'],
    ['PassWord1', '$SHA$3c72a18a29b08d40$8e50a7a4f69a80f4893dc921eac84bd74b3f9ebfa22908302c9965eac3aa45e5'],
    ['&^%te$t?Pw@_', '$SHA$584cea1cfab90030$adc006330e73d81e463fe02a4fe9b17bdbbcc05955bff72fb27cf2089f0b3859'],
    ['\u00e2\u00cb_3(\u00ed\u00f9*', '$SHA$0b503d90dd9949d4$ba70c330242e0daa9a154ec9f4cce7f01dd05aff489d37c653e36a507c74d84f'],
  ]);
  assertProblems([
    ['$SHA$11aa0706173d7272$dbba96681c2ae4e0bfdf226d70fbbc5e4ee3d8071faa613bc533fe8a64817d1', /malformed/],
    ['$SHA$$dbba96681c2ae4e0bfdf226d70fbbc5e4ee3d8071faa613bc533fe8a64817d10', /malformed/],
    ['$SHA$11aa$dbba96681c2ae4e0bfdf226d70fbbc5e4ee3d8071faa613bc533fe8a64817d1g', /malformed/],
  ]);
});

test("PBKDF2-SHA256 in Django's form and AuthMe's hexadecimal and base64 forms", async () => {
  await assertVectors('pbkdf2-sha256', [
    // passlib, test_handlers_django.py (made by Django 1.4's hasher).
    ['not a password', 'pbkdf2_sha256$10000$kjVJaVz6qsnJ$5yPHw3rwJGECpUf70daLGhOrQ5+AMxIJdz1c3bqK1Rs='],
    ['t\u00e1\u0411\u2113\u0259', 'pbkdf2_sha256$10000$bEwAfNrH1TlQ$OgYUblFNUX1B8GfMqaCYUK/iHyO0pa7STTDdaEJBuY0='],
    // AuthMe, Pbkdf2DjangoTest.java.
    ['PassWord1', 'pbkdf2_sha256$15000$f9d8a58f3fe2$oMqmMGuJetdubW0cpubmT8CltQLjHT+L2GuwKsaWLx8='],
    // AuthMe, Pbkdf2Test.java: upper-case hex of 64 bytes.
    ['password', 'pbkdf2_sha256$10000$b25801311edf$093E38B16DFF13FCE5CD64D5D888EE6E0376A3E572FE5DA6749515EA0F384413223A21C464B0BE899E64084D1FFEFD44F2AC768453C87F41B42CC6954C416900'],
    ['\u00e2\u00cb_3(\u00ed\u00f9*', 'pbkdf2_sha256$10000$fb944d66d754$F7E3BF8CB07CE3B3C8C5C534F803252F7B4FD58832E33BA62BA46CA06F23BAE12BE03A9CB5874BCFD4469E42972406F920E59F002247B23C22A8CF3D0E7BFFE0'],
    ['PassWord1', 'pbkdf2_sha256$4128$3469b0d48b702046$DC8A54351008C6054E12FB19E0BF8A4EA6D4165E0EDC97A1ECD15231037C382DE5BF85D07D5BC9D1ADF9BBFE4CE257C6059FB1B9FF65DB69D8B205F064BE0DA9'],
    // AuthMe, Pbkdf2Base64Test.java: "pbkdf2$", the salt in base64 too.
    ['password', 'pbkdf2$4128$JddgMm9rNhbYNfEmf4pOKA==$9Q7QyaEDhqAj8KfF7FdPRq6f9uAWhMwioKvzAWMxSu8='],
    ['\u00e2\u00cb_3(\u00ed\u00f9*', 'pbkdf2$4128$AQIDBAUGBwgJCgsMDQ4PEA==$djo4l/sF2mo7hNBflk/JZNFURfNbYDT2KUjJ4n1K/8Y='],
  ]);
  const key = '5yPHw3rwJGECpUf70daLGhOrQ5+AMxIJdz1c3bqK1Rs=';
  assertProblems([
    [`pbkdf2_sha256$${PBKDF2_MAX_ITERATIONS + 1}$salt$${key}`, /above this service's limit of 2000000/],
    [`pbkdf2_sha256$0$salt$${key}`, /not a positive whole number/],
    [`pbkdf2_sha256$1e4$salt$${key}`, /not a positive whole number/],
    [`pbkdf2_sha256$10000$$${key}`, /salt is empty/],
    ['pbkdf2_sha256$10000$salt$5yPHw3rwJGECpUf70daLGhOrQ5+AMxIJdz1c3bqK1Rs', /neither hexadecimal nor base64/],
    ['pbkdf2_sha256$10000$salt$093E38B1', /4 bytes, not 16 to 64/],
    [`pbkdf2_sha256$10000$salt$${'AB'.repeat(65)}`, /65 bytes, not 16 to 64/],
    [`pbkdf2_sha256$10000$salt$${key}$extra`, /four fields/],
    [`pbkdf2$4128$not base64!$${key}`, /not base64/],
    [`pbkdf2_sha1$10000$salt$${key}`, /unknown hash format/],
  ]);
});

// phc-winner-argon2, src/test.c (the reference implementation's encoded-hash checks).
const ARGON2_REFERENCE: [string, string][] = [
  ['password', '$argon2i$v=19$m=256,t=2,p=2$c29tZXNhbHQ$T/XOJ2mh1/TIpJHfCdQan76Q5esCFVoT5MAeIM1Oq2E'],
  ['password', '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4'],
  ['password', '$argon2id$v=19$m=256,t=2,p=2$c29tZXNhbHQ$bQk8UB/VmZZF4Oo79iDXuL5/0ttZwg2f/5U52iv1cDc'],
  ['password', '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc'],
  ['differentpassword', '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$C4TWUs9rDEvq7w3+J4umqA32aWKB1+DSiRuBfYxFj94'],
  // AuthMe, Argon2Test.java (16 bytes of salt, as password_hash writes).
  ['PassWord1', '$argon2i$v=19$m=65536,t=2,p=1$amZHbPfgc5peKd/4w1AI1g$Q2PUiOVw47TACijP57U0xf7QfiZ00HV4eFzMDA6yKRE'],
];
const noArgon2 = runtimeArgon2 ? false : `this runtime has no crypto.argon2 (Node ${process.versions.node})`;

test('argon2 in PHC form, verified by crypto.argon2: the reference vectors, and argon2d', { skip: noArgon2 }, async () => {
  await assertVectors('argon2', ARGON2_REFERENCE);
  // No published argon2d v=19 string: one made here, by the same crypto.argon2 with other bytes.
  const nonce = Buffer.from('saltsaltsaltsalt');
  const tag = nodeCrypto.argon2Sync('argon2d', { message: 'pw', nonce, parallelism: 1, tagLength: 32, memory: 64, passes: 1 });
  const strip = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');
  await assertVectors('argon2', [['pw', `$argon2d$v=19$m=64,t=1,p=1$${strip(nonce)}$${strip(tag)}`]]);
});

test('without crypto.argon2 a sound argon2 hash is refused with UnsupportedHashError, never a false', async () => {
  const [password, hash] = ARGON2_REFERENCE[1]!;
  await assert.rejects(verifyArgon2(password, hash, null), (err: Error) => {
    assert.ok(err instanceof UnsupportedHashError);
    assert.equal(err.message, 'argon2 hashes need Node 24.7 or later; this runtime has no crypto.argon2');
    return true;
  });
  // recognizeHash marks it where this runtime lacks crypto.argon2, and keeps it all the same.
  const recognized = recognizeHash(hash);
  assert.deepEqual(recognized, runtimeArgon2 ? { format: 'argon2', stored: hash } : { format: 'argon2', stored: hash, needs: 'argon2' });
});

test('malformed or too costly argon2 strings each say why', () => {
  const tail = 'c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc';
  assertProblems([
    [`$argon2i$m=65536,t=2,p=1$${tail}`, /version 16 is not supported/],
    [`$argon2id$v=16$m=65536,t=2,p=1$${tail}`, /version 16 is not supported/],
    [`$argon2id$v=19$m=${ARGON2_MAX_MEMORY_KIB * 2},t=2,p=1$${tail}`, /memory 524288 KiB is above this service's limit/],
    [`$argon2id$v=19$m=65536,t=11,p=1$${tail}`, /passes 11 are above/],
    // About a second of work at most: libsodium's moderate level (256 MiB, 3 passes) is over it.
    [`$argon2id$v=19$m=262144,t=3,p=1$${tail}`, /work of 262144 KiB times 3 passes is above this service's limit of 524288 KiB/],
    [`$argon2id$v=19$m=131072,t=5,p=1$${tail}`, /work of 131072 KiB times 5 passes is above/],
    [`$argon2id$v=19$m=65536,t=2,p=17$${tail}`, /parallelism 17 is above/],
    [`$argon2id$v=19$m=8,t=2,p=2$${tail}`, /at least 8 KiB per lane/],
    [`$argon2id$v=19$m=65536,t=0,p=1$${tail}`, /malformed/],
    [`$argon2id$v=19$t=2,m=65536,p=1$${tail}`, /malformed/],
    [`$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ=$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc`, /not base64/],
    ['$argon2id$v=19$m=65536,t=2,p=1$c29tZQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc', /too short/],
    [`$argon2ds$v=19$m=65536,t=2,p=1$${tail}`, /unknown hash format/],
  ]);
});

test("drasl's scrypt, at drasl's parameters", async () => {
  const salt = Buffer.from('0123456789abcdef');
  const { N, r, p, keyBytes } = DRASL_SCRYPT;
  const hash = nodeCrypto.scryptSync('hunter2 \u00e9', salt, keyBytes, { N, r, p, maxmem: 256 * N * r });
  const stored = `drasl-scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
  await assertVectors('drasl-scrypt', [['hunter2 \u00e9', stored]]);
  assert.equal(await verify('hunter2 e\u0301', stored), false, 'not normalised');
  assertProblems([
    ['drasl-scrypt$$', /no password/],
    [`drasl-scrypt$${salt.toString('base64')}$${hash.subarray(1).toString('base64')}`, /31 bytes, not 32/],
    [`drasl-scrypt$${salt.toString('base64')}`, /malformed/],
    [`drasl-scrypt$!!$${hash.toString('base64')}`, /not base64/],
  ]);
});

test('what is not a foreign hash is refused, and nothing is trimmed', async () => {
  const ours = 'scrypt$16384$8$5$c2FsdHNhbHRzYWx0c2FsdA==$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U=';
  assertProblems([
    ['', /empty hash/],
    [ours, /unknown hash format/],
    [' $2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', /unknown hash format/],
    ['$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW\n', /60 characters, not 61/],
    ['5f4dcc3b5aa765d61d8327deb882cf99', /unknown hash format/],
    // A salt of any length would be hashed on the main thread: no hash is taken past 512 characters.
    [`$SHA$${'s'.repeat(512)}$${'ab'.repeat(32)}`, /a hash longer than 512 characters/],
  ]);
  await assert.rejects(verify('pw', ours), /not a foreign hash this service verifies: unknown hash format/);
});

const DENO = join(ROOT, 'node_modules', '.bin', 'deno');

test('on Deno, the formats and the workers run from the sources', { skip: !existsSync(DENO) && 'no Deno in node_modules/.bin' }, async () => {
  const fixture = join(ROOT, 'test', 'import', 'fixtures', 'deno-workers.ts');
  const result = await runProc([DENO, 'run', '-A', fixture], { cwd: ROOT, timeoutMs: 60_000 });
  assert.equal(result.timedOut, false, 'Deno did not end by itself');
  const out = JSON.parse(result.stdout);
  assert.deepEqual(out.answers, [true, false, true, true, true]);
  // Deno 2.9 has no crypto.argon2: the hash is kept, and its verification refused with a reason.
  const argon2Missing = out.argon2.needs === 'argon2';
  assert.equal(out.argon2Answer, argon2Missing ? 'UnsupportedHashError' : 'true');
});

test('a hash imported under a higher limit is not checked: the login is refused as one this server cannot check, with a reset link as the way on', async () => {
  const workers = startHashWorkers(1);
  try {
    const body = 'IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0abcdefghijklmnopqrstuvw';
    for (const stored of [`$2y$14$${body}`, `pbkdf2_sha256$${PBKDF2_MAX_ITERATIONS + 1}$salt$5yPHw3rwJGECpUf70daLGhOrQ5+AMxIJdz1c3bqK1Rs=`, '$argon2id$v=19$m=262144,t=3,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc']) {
      await assert.rejects(verifyForeignHash('any password', stored, workers), (err: unknown) => {
        assert.ok(err instanceof UnsupportedHashError, String(err));
        assert.match(err.message, /above this service's limit .*; an admin can give the player a reset link$/);
        return true;
      });
    }
  } finally {
    await workers.close();
  }
});
