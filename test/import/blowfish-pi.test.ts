// Blowfish's initial state is the hexadecimal fraction of π; this recomputes those digits, so the
// table in src/import/hashes/blowfish-pi.ts need not be trusted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PI_HEX_DIGITS } from '../../src/import/hashes/blowfish-pi.ts';

/** arctan(1/x) in fixed point with `bits` fraction bits, by its Taylor series. */
function arctanOfInverse(x: bigint, bits: bigint): bigint {
  let term = (1n << bits) / x;
  let sum = term;
  for (let n = 3n, sign = -1n; term !== 0n; n += 2n, sign = -sign) {
    term /= x * x;
    sum += (sign * term) / n;
  }
  return sum;
}

test('the table is the first 8,336 hexadecimal digits of the fraction of π (Machin: π = 16·atan(1/5) − 4·atan(1/239))', () => {
  const digits = 18 * 8 + 4 * 256 * 8;
  const guard = 64n; // bits beyond the digits, to absorb the series' rounding
  const bits = BigInt(digits * 4) + guard;
  const pi = 16n * arctanOfInverse(5n, bits) - 4n * arctanOfInverse(239n, bits);
  const fraction = (pi - (3n << bits)) >> guard;
  assert.equal(PI_HEX_DIGITS.length, digits);
  assert.equal(PI_HEX_DIGITS, fraction.toString(16).padStart(digits, '0'));
});

test('the table begins and ends with the published words (P1 = 243f6a88, S4[255] = 3ac372e6)', () => {
  assert.equal(PI_HEX_DIGITS.slice(0, 8), '243f6a88');
  assert.equal(PI_HEX_DIGITS.slice(-8), '3ac372e6');
});
