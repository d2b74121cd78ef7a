// bcrypt (Provos and Mazières, 1999) as OpenBSD's reference computes "$2b$": Blowfish's expensive
// key schedule (EksBlowfishSetup), then "OrpheanBeholderScryDoubt" enciphered 64 times. "$2a$" and
// "$2y$" compute the same for any password under 255 bytes; see parseBcrypt for what differs.
// Pure JavaScript and slow on purpose: it runs only in a hash worker (worker.ts).
import { timingSafeEqual } from 'node:crypto';
import { PI_HEX_DIGITS } from './blowfish-pi.ts';

const P_WORDS = 18;
const S_BOX = 256;
/** Offsets of the four S-boxes in the state, which holds the P-array first. */
const S0 = P_WORDS;
const S1 = S0 + S_BOX;
const S2 = S1 + S_BOX;
const S3 = S2 + S_BOX;
const INITIAL_STATE = Uint32Array.from({ length: P_WORDS + 4 * S_BOX }, (_, i) =>
  Number.parseInt(PI_HEX_DIGITS.slice(8 * i, 8 * i + 8), 16),
);

/** The P-array takes 18 words of key, 72 bytes: the reference ignores every byte after them. */
const KEY_BYTES = 72;
const SALT_BYTES = 16;
/** bcrypt enciphers 24 bytes and keeps 23 of them (31 characters). */
const HASH_BYTES = 23;
const MAGIC = new TextEncoder().encode('OrpheanBeholderScryDoubt');
const ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
import { ABOVE_LIMIT } from './errors.ts';

const MIN_COST = 4;
const MAX_COST = 31;
/**
 * The format allows cost 31 (2^31 rounds, days of work); a wrong guess may not hold a hash slot
 * that long. Cost 13 takes about a second here (16 took seven); sites write 10 to 12.
 */
export const BCRYPT_MAX_COST = 13;
const SHAPE = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/;

export interface BcryptHash {
  cost: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

/** bcrypt's base64: its own alphabet, bits taken most significant first, no padding. */
function decode(text: string, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let acc = 0;
  let bits = 0;
  let n = 0;
  for (const char of text) {
    acc = (acc << 6) | ALPHABET.indexOf(char);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n < bytes) out[n++] = acc >>> bits;
      acc &= (1 << bits) - 1;
    }
  }
  return out;
}

function encode(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    for (; bits >= 6; acc &= (1 << bits) - 1) out += ALPHABET[(acc >>> (bits -= 6)) & 63];
  }
  return bits > 0 ? out + ALPHABET[(acc << (6 - bits)) & 63] : out;
}

/**
 * The cost, salt and hash of a "$2a$", "$2b$" or "$2y$" string, or why it is refused. "$2x$" marks
 * hashes that PHP's crypt_blowfish computed with its sign-extension bug (CVE-2011-2483) for
 * 8-bit passwords: they are wrong hashes, and refused. Two rarer differences are left out on
 * purpose: crypt_blowfish's "$2a$" counter-measure for that bug changes only passwords with a
 * byte 0xff, which UTF-8 never holds; OpenBSD's old "$2a$" wrapped the length of passwords of 255
 * bytes or more, which "$2b$" fixed and which this follows.
 */
export function parseBcrypt(stored: string): BcryptHash | string {
  const variant = /^\$2([a-z]?)\$/.exec(stored)?.[1];
  if (variant === 'x') return 'bcrypt $2x$ hashes were made by crypt_blowfish with its 8-bit bug (CVE-2011-2483) and cannot be verified';
  if (variant === undefined || !['a', 'b', 'y'].includes(variant)) return 'unknown bcrypt variant';
  if (stored.length !== 60) return `a bcrypt hash has 60 characters, not ${stored.length}`;
  if (!SHAPE.test(stored)) return "bcrypt hash is malformed (two-digit cost, then 53 characters of bcrypt's base64)";
  const cost = Number(stored.slice(4, 6));
  if (cost < MIN_COST || cost > MAX_COST) return `bcrypt cost must be 04 to 31, not ${stored.slice(4, 6)}`;
  if (cost > BCRYPT_MAX_COST) return `bcrypt cost ${cost} is ${ABOVE_LIMIT} of ${BCRYPT_MAX_COST}`;
  return { cost, salt: decode(stored.slice(7, 29), SALT_BYTES), hash: decode(stored.slice(29), HASH_BYTES) };
}

/** Enciphers the block at lr[at], lr[at + 1] in place with the state s (16 Feistel rounds). */
function encipher(s: Uint32Array, lr: Uint32Array, at: number): void {
  let l = lr[at] ^ s[0];
  let r = lr[at + 1];
  for (let i = 1; i < P_WORDS - 1; i += 2) {
    r ^= (((s[S0 + (l >>> 24)] + s[S1 + ((l >>> 16) & 255)]) ^ s[S2 + ((l >>> 8) & 255)]) + s[S3 + (l & 255)]) ^ s[i];
    l ^= (((s[S0 + (r >>> 24)] + s[S1 + ((r >>> 16) & 255)]) ^ s[S2 + ((r >>> 8) & 255)]) + s[S3 + (r & 255)]) ^ s[i + 1];
  }
  lr[at] = r ^ s[P_WORDS - 1];
  lr[at + 1] = l;
}

/** The big-endian word at data[at..at + 3], the data read as a cycle (the reference's stream2word). */
function word(data: Uint8Array, at: number): number {
  let w = 0;
  for (let i = 0; i < 4; i++) w = (w << 8) | data[(at + i) % data.length];
  return w;
}

/** The reference's Blowfish_expandstate when given a salt, Blowfish_expand0state without. */
function expand(s: Uint32Array, key: Uint8Array, salt?: Uint8Array): void {
  for (let i = 0; i < P_WORDS; i++) s[i] ^= word(key, 4 * i);
  const block = new Uint32Array(2);
  for (let i = 0, j = 0; i < s.length; i += 2, j += 8) {
    if (salt) {
      block[0] ^= word(salt, j);
      block[1] ^= word(salt, j + 4);
    }
    encipher(s, block, 0);
    s[i] = block[0];
    s[i + 1] = block[1];
  }
}

/**
 * The key as the reference reads a C string: up to its first NUL, at most 72 bytes, and a NUL
 * terminator that counts as key when the password is shorter than 72 bytes.
 */
function keyOf(password: Uint8Array): Uint8Array {
  const nul = password.indexOf(0);
  const text = password.subarray(0, Math.min(nul === -1 ? password.length : nul, KEY_BYTES));
  if (text.length === KEY_BYTES) return text;
  const key = new Uint8Array(text.length + 1);
  key.set(text);
  return key;
}

/** The 23 bytes that bcrypt keeps of a password, at 2^cost rounds with a 16-byte salt. */
export function bcryptDigest(password: Uint8Array, cost: number, salt: Uint8Array): Uint8Array {
  const key = keyOf(password);
  const s = INITIAL_STATE.slice();
  expand(s, key, salt);
  for (let round = 2 ** cost; round > 0; round--) {
    expand(s, key);
    expand(s, salt);
  }
  const text = Uint32Array.from({ length: MAGIC.length / 4 }, (_, i) => word(MAGIC, 4 * i));
  for (let i = 0; i < 64; i++) for (let b = 0; b < text.length; b += 2) encipher(s, text, b);
  const out = new Uint8Array(4 * text.length);
  const view = new DataView(out.buffer);
  text.forEach((w, i) => view.setUint32(4 * i, w));
  return out.subarray(0, HASH_BYTES);
}

/** A "$2b$" string as the reference writes it; for tests, which need hashes of their own. */
export function hashBcrypt(password: Uint8Array, cost: number, salt: Uint8Array): string {
  return `$2b$${String(cost).padStart(2, '0')}$${encode(salt)}${encode(bcryptDigest(password, cost, salt))}`;
}

/** True when the password (UTF-8, or raw bytes) matches; compared in constant time. */
export function verifyBcrypt(password: string | Uint8Array, stored: string): boolean {
  const parsed = parseBcrypt(stored);
  if (typeof parsed === 'string') throw new Error(parsed);
  const bytes = typeof password === 'string' ? new TextEncoder().encode(password) : password;
  return timingSafeEqual(bcryptDigest(bytes, parsed.cost, parsed.salt), parsed.hash);
}
