// phpass "portable" hashes (Openwall's PasswordHash.php, crypt_private): "$P$" (WordPress before
// 6.8) or "$H$" (phpBB 3.0), a log2 iteration count, 8 characters of salt, then 16 bytes of
// iterated MD5. Pure JavaScript around node:crypto's MD5, many rounds: it runs only in a hash
// worker (worker.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import { ABOVE_LIMIT } from './errors.ts';

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LENGTH = 34;
/** crypt_private's own bounds on the iteration count's log2; outside them it fails every password. */
const MIN_LOG2 = 7;
const MAX_LOG2 = 30;
/** 2^18 MD5 rounds, about a second here, which a wrong guess may hold a hash slot for; WordPress writes 2^13 and phpBB 2^11. */
export const PHPASS_MAX_LOG2 = 18;
const HASH_BYTES = 16;

export interface PhpassHash {
  log2: number;
  salt: string;
  hash: Uint8Array;
}

/** phpass's encode64, read back: 6 bits a character, least significant first. */
function decode(text: string, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let acc = 0;
  let bits = 0;
  let n = 0;
  for (const char of text) {
    acc |= ITOA64.indexOf(char) << bits;
    bits += 6;
    for (; bits >= 8 && n < bytes; bits -= 8, acc >>>= 8) out[n++] = acc & 255;
  }
  return out;
}

/** The iteration count, salt and hash of a "$P$" or "$H$" string, or why it is refused. */
export function parsePhpass(stored: string): PhpassHash | string {
  if (!/^\$[PH]\$/.test(stored)) return 'not a phpass hash';
  if (stored.length !== LENGTH) return `a phpass hash has ${LENGTH} characters, not ${stored.length}`;
  if ([...stored.slice(3)].some((c) => !ITOA64.includes(c))) return 'phpass hash has a character outside its alphabet';
  const log2 = ITOA64.indexOf(stored[3]!);
  if (log2 < MIN_LOG2 || log2 > MAX_LOG2) return `phpass iteration count 2^${log2} is outside 2^${MIN_LOG2}..2^${MAX_LOG2}`;
  if (log2 > PHPASS_MAX_LOG2) return `phpass iteration count 2^${log2} is ${ABOVE_LIMIT} of 2^${PHPASS_MAX_LOG2}`;
  return { log2, salt: stored.slice(4, 12), hash: decode(stored.slice(12), HASH_BYTES) };
}

const md5 = (head: Buffer, tail: Buffer): Buffer => createHash('md5').update(head).update(tail).digest();

/** True when the password (UTF-8 bytes, as PHP hashed them) matches; compared in constant time. */
export function verifyPhpass(password: string, stored: string): boolean {
  const parsed = parsePhpass(stored);
  if (typeof parsed === 'string') throw new Error(parsed);
  const bytes = Buffer.from(password, 'utf8');
  let hash = md5(Buffer.from(parsed.salt, 'latin1'), bytes);
  for (let round = 2 ** parsed.log2; round > 0; round--) hash = md5(hash, bytes);
  return timingSafeEqual(hash, parsed.hash);
}
