// bcrypt against the published vectors of other implementations. Verified here on the main thread,
// with the byte-level function; the service runs it in a worker (hash-worker.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BCRYPT_MAX_COST, hashBcrypt, parseBcrypt, verifyBcrypt } from '../../src/import/hashes/bcrypt.ts';

const bytes = (...parts: (string | number[])[]): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const repeat = (part: number[], times: number): number[] => Array.from({ length: times }, () => part).flat();

// Openwall's crypt_blowfish 1.3 wrapper.c tests[] (Solar Designer), as php-src carries them in
// ext/standard/tests/strings/crypt_blowfish.phpt; raw bytes, so the 8-bit ones are written as such.
// Left out: the $2x$ lines (refused, below) and the $2a$ lines that crypt_blowfish's counter-measure
// changes (pinned in their own test).
const CRYPT_BLOWFISH: [Uint8Array, string][] = [
  [bytes('U*U'), '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
  [bytes('U*U*'), '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK'],
  [bytes('U*U*U'), '$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a'],
  [
    bytes('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored'),
    '$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui',
  ],
  [bytes([0xff, 0xff, 0xa3]), '$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e'],
  [bytes([0xff, 0xff, 0xa3]), '$2b$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e'],
  [bytes([0xa3]), '$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq'],
  [bytes([0xa3]), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq'],
  [bytes([0xa3]), '$2b$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq'],
  [bytes([0xff, 0xa3], '34', [0xff, 0xff, 0xff, 0xa3], '345'), '$2y$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi'],
  [bytes([0xff, 0xa3], '345'), '$2y$05$/OK.fbVrR/bpIqNJ5ianF.nRht2l/HRhr6zmCp9vYUvvsqynflf9e'],
  [bytes([0xff, 0xa3], '345'), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.nRht2l/HRhr6zmCp9vYUvvsqynflf9e'],
  [bytes([0xa3], 'ab'), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS'],
  [bytes([0xa3], 'ab'), '$2y$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS'],
  [bytes(repeat([0xaa], 72), 'chars after 72 are ignored as usual'), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.swQOIzjOiJ9GHEPuhEkvqrUyvWhEMx6'],
  [bytes(repeat([0xaa, 0x55], 36)), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.R9xrDjiycxMbQE2bp.vgqlYpW5wx2yy'],
  [bytes(repeat([0x55, 0xaa, 0xff], 24)), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.9tQZzcJfm3uj2NvJ/n5xkhpqLrMpWCe'],
  [bytes(''), '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
];

const DIGITS = '0123456789'.repeat(26);
// Python passlib, passlib/tests/test_handlers_bcrypt.py: John the Ripper 1.7.9's vectors, the
// correct (8-bit bug free) hash of U+0451, OpenBSD's length wrap check, py-bcrypt's vectors, and a
// UTF-8 password (passlib's UPASS_TABLE).
const PASSLIB: [string | Uint8Array, string][] = [
  ['U*U*U*U*', '$2a$05$c92SVSfjeiCD6F2nAD6y0uBpJDjdRkt0EgeC4/31Rf2LUZbDRDE.O'],
  ['U*U***U', '$2a$05$WY62Xk2TXZ7EvVDQ5fmjNu7b0GEzSzUXUh2cllxJwhtOeMtWV3Ujq'],
  ['U*U***U*', '$2a$05$Fa0iKV3E2SYVUlMknirWU.CFYGvJ67UwVKI1E2FP6XeLiZGcH3MJi'],
  ['*U*U*U*U', '$2a$05$.WRrXibc1zPgIdRXYfv.4uu6TD1KWf0VnHzq/0imhUhuxSxCyeBs2'],
  ['', '$2a$05$Otz9agnajgrAe0.kFVF9V.tzaStZ2s1s4ZWi/LY4sw2k/MTVFj/IO'],
  ['\u0451', '$2y$05$6bNw2HLQYeqHYyBfLMsv/OUcZd0LKP39b87nBw3.S2tVZSqiQX6eu'],
  [DIGITS.slice(0, 254), '$2a$04$R1lJ2gkNaoPGdafE.H.16.1MKHPvmKwryeulRe225LKProWYwt9Oi'],
  [DIGITS.slice(0, 255), '$2a$04$R1lJ2gkNaoPGdafE.H.16.1MKHPvmKwryeulRe225LKProWYwt9Oi'],
  [DIGITS.slice(0, 256), '$2a$04$R1lJ2gkNaoPGdafE.H.16.1MKHPvmKwryeulRe225LKProWYwt9Oi'],
  ['', '$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s.'],
  ['~!@#$%^&*()      ~!@#$%^&*()PNBFRD', '$2a$10$LgfYWkbzEvQ4JakH7rOvHe0y8pHKF9OaFgwUZ2q7W2FFZmZzJYlfS'],
  ['t\u00e1\u0411\u2113\u0259', '$2a$05$Z17AXnnlpzddNUvnC6cZNOSwMA/8oNiKnHTHTwLlBijfucQQlHjaG'],
  ['t\u00e1\u0411\u2113\u0259', '$2b$05$Z17AXnnlpzddNUvnC6cZNOSwMA/8oNiKnHTHTwLlBijfucQQlHjaG'],
];

// AuthMe, BCryptTest.java and BCrypt2yTest.java: hashes of a Java library at cost 10, one of a
// non-ASCII password.
const AUTHME: [string, string][] = [
  ['PassWord1', '$2a$10$LOhUxhEcS0vgDPv/jkXvCurNb7LjP9xUlEolJGk.Uhgikqc6FtIOi'],
  ['\u00e2\u00cb_3(\u00ed\u00f9*', '$2a$10$mkmO3SNzQT/SA5fG/8P8PePz/DI/kKpIH8vd1Owf/fQfFu6F0QyWO'],
  ['&^%te$t?Pw@_', '$2y$10$be6f11548dc5fb4088410ONdC0dXnJ04y1RHcJh5fVF3XK5d.qgqK'],
];

/** Another password: one byte put in front, since bytes after the 72nd would change nothing. */
const wrong = (password: string | Uint8Array): string | Uint8Array =>
  typeof password === 'string' ? `x${password}` : bytes([0x78, ...password]);

test("crypt_blowfish's vectors verify, and a wrong password does not", () => {
  for (const [password, hash] of CRYPT_BLOWFISH) {
    assert.equal(verifyBcrypt(password, hash), true, hash);
    assert.equal(verifyBcrypt(wrong(password), hash), false, hash);
  }
});

test("passlib's vectors verify (John the Ripper, py-bcrypt, no length wrap past 255 bytes, UTF-8)", () => {
  for (const [password, hash] of PASSLIB) {
    assert.equal(verifyBcrypt(password, hash), true, hash);
    assert.equal(verifyBcrypt(wrong(password), hash), false, hash);
  }
});

test("AuthMe's cost-10 vectors verify, a non-ASCII password as its UTF-8", () => {
  for (const [password, hash] of AUTHME) {
    assert.equal(verifyBcrypt(password, hash), true, hash);
    assert.equal(verifyBcrypt(password.normalize('NFD'), hash), password === password.normalize('NFD'), `not normalised: ${hash}`);
  }
});

test('72 bytes count, with the NUL terminator: the 73rd byte does not, the 72nd does', () => {
  const salt = new Uint8Array(16).fill(7);
  const hash = hashBcrypt(bytes('x'.repeat(72)), 4, salt);
  assert.equal(verifyBcrypt('x'.repeat(72) + 'anything', hash), true);
  assert.equal(verifyBcrypt('x'.repeat(71), hash), false);
  // A password is a C string to the reference: it ends at its first NUL.
  assert.equal(verifyBcrypt('a\0b', hashBcrypt(bytes('a'), 4, salt)), true);
});

test("hashBcrypt writes the reference's strings (crypt_blowfish's U*U, re-made)", () => {
  const [, hash] = CRYPT_BLOWFISH[0]!;
  const parsed = parseBcrypt(hash);
  assert.ok(typeof parsed !== 'string');
  assert.equal(hashBcrypt(bytes('U*U'), parsed.cost, parsed.salt), hash.replace('$2a$', '$2b$'));
});

test("crypt_blowfish's $2a$ counter-measure for the 8-bit bug is not followed: OpenBSD's $2a$ is (passwords with byte 0xff only, never UTF-8)", () => {
  assert.equal(verifyBcrypt(bytes([0xff, 0xff, 0xa3]), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.nqd1wy.pTMdcvrRWxyiGL2eMz.2a85.'), false);
  assert.equal(verifyBcrypt(bytes([0xff, 0xff, 0xa3]), '$2a$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e'), true);
});

test('malformed and refused bcrypt strings each say why', () => {
  const body = 'CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';
  const cases: [string, RegExp][] = [
    ['$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e', /\$2x\$.*8-bit bug.*CVE-2011-2483/],
    [`$2c$05$${body}`, /unknown bcrypt variant/],
    [`$2$05$${body}`, /unknown bcrypt variant/],
    [`$2a$03$${body}`, /cost must be 04 to 31, not 03/],
    [`$2a$32$${body}`, /cost must be 04 to 31, not 32/],
    [`$2a$${BCRYPT_MAX_COST + 1}$${body}`, new RegExp(`cost ${BCRYPT_MAX_COST + 1} is above this service's limit`)],
    [`$2a$05$${body.slice(1)}`, /60 characters, not 59/],
    [`$2a$05$${body}x`, /60 characters, not 61/],
    [`$2a$05$${body.slice(0, -1)}!`, /malformed/],
    [`$2a$5a$${body}`, /malformed/],
  ];
  for (const [hash, problem] of cases) {
    const parsed = parseBcrypt(hash);
    assert.equal(typeof parsed, 'string', hash);
    assert.match(parsed as string, problem, hash);
    assert.throws(() => verifyBcrypt('x', hash), problem);
  }
});
