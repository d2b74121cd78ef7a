// phpass portable hashes against published vectors. Verified here on the main thread; the service
// runs them in a worker (hash-worker.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePhpass, PHPASS_MAX_LOG2, verifyPhpass } from '../../src/import/hashes/phpass.ts';

// Python passlib, passlib/tests/test_handlers.py, phpass_test.known_correct_hashes: Openwall's
// test.php hash of "test12345", John the Ripper's, and a UTF-8 password (UPASS_TABLE).
const PASSLIB: [string, string][] = [
  ['test12345', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0'],
  ['test1', '$H$9aaaaaSXBjgypwqm.JsMssPLiS8YQ00'],
  ['123456', '$H$9PE8jEklgZhgLmZl5.HYJAzfGCQtzi1'],
  ['123456', '$H$9pdx7dbOW3Nnt32sikrjAxYFjX8XoK1'],
  ['thisisalongertestPW', '$P$912345678LIjjb6PhecupozNBmDndU0'],
  ['JohnRipper', '$P$612345678si5M0DDyPpmRCmcltU/YW/'],
  ['JohnRipper', '$H$712345678WhEyvy1YWzT4647jzeOmo0'],
  ['JohnRipper', '$P$B12345678L6Lpt4BxNotVIMILOa9u81'],
  ['', '$P$7JaFQsPzJSuenezefD/3jHgt5hVfNH0'],
  ['compL3X!', '$P$FiS0N5L672xzQx1rt1vgdJQRYKnQM9/'],
  ['t\u00e1\u0411\u2113\u0259', '$P$7SMy8VxnfsIy2Sxm7fJxDSdil.h7TW.'],
];

// AuthMe, WordpressTest.java (WordPress's $P$B, 2^13 rounds) and PhpBBTest.java ($H$7).
const AUTHME: [string, string][] = [
  ['password', '$P$B9wyjxuU4yrfjnnHNGSzH9ti9CC0Os1'],
  ['&^%te$t?Pw@_', '$P$BjzPjjzPjrAOyB1V0WFdpisgCTFx.N/'],
  ['\u00e2\u00cb_3(\u00ed\u00f9*', '$P$BjzPjxxyjp2QdKcab/oTW8l/W0AgE21'],
  ['PassWord1', '$H$7ESfAVjzqajC7fJFcZKZIhyds41MuW.'],
];

test("passlib's and AuthMe's vectors verify, and a wrong password does not", () => {
  for (const [password, hash] of [...PASSLIB, ...AUTHME]) {
    assert.equal(verifyPhpass(password, hash), true, hash);
    assert.equal(verifyPhpass(`${password}x`, hash), false, hash);
  }
});

test('a non-ASCII password is its UTF-8 bytes, as PHP hashed it (not Latin-1, not normalised)', () => {
  // AuthMe's Java port of phpBB's check hashes Latin-1, so its PhpBBTest vector for this password
  // (made that way) is not phpBB's and does not verify here.
  assert.equal(verifyPhpass('\u00e2\u00cb_3(\u00ed\u00f9*', '$H$7Brcg8zO9amr2SHVgz.pFxprDu40v4/'), false);
  assert.equal(verifyPhpass('t\u00e1\u0411\u2113\u0259'.normalize('NFD'), '$P$7SMy8VxnfsIy2Sxm7fJxDSdil.h7TW.'), false);
});

test('malformed and refused phpass strings each say why', () => {
  const cases: [string, RegExp][] = [
    ['$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r!L0', /outside its alphabet/], // passlib's known_malformed_hashes
    ['$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L', /34 characters, not 33/],
    ['$P$4IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0', /2\^6 is outside 2\^7\.\.2\^30/],
    ['$P$zIQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0', /2\^63 is outside/],
    [`$P$${'./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'[PHPASS_MAX_LOG2 + 1]}IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0`, /above this service's limit of 2\^18/],
    ['$X$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0', /not a phpass hash/],
  ];
  for (const [hash, problem] of cases) {
    const parsed = parsePhpass(hash);
    assert.equal(typeof parsed, 'string', hash);
    assert.match(parsed as string, problem, hash);
    assert.throws(() => verifyPhpass('x', hash), problem);
  }
});
