// PBKDF2-HMAC-SHA256 in the three forms an import meets:
// - Django: "pbkdf2_sha256$iterations$salt$base64(32 bytes)", the salt used as its UTF-8 text;
// - AuthMe's Pbkdf2.java: the same fields, the key as upper-case hex (64 bytes);
// - AuthMe's Pbkdf2Base64.java: "pbkdf2$iterations$base64(salt)$base64(32 bytes)".
// The two "pbkdf2_sha256" forms are told apart by the key: Django's base64 of 32 bytes always ends
// in "=", so a key of hexadecimal digits only is AuthMe's. Derived on libuv's thread pool.
import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { decodeBase64 } from './base64.ts';
import { ABOVE_LIMIT } from './errors.ts';

/** About a second of work here, which a wrong guess may hold a hash slot for (recent Django writes about a million; AuthMe 10,000 to 120,000). */
export const PBKDF2_MAX_ITERATIONS = 2_000_000;
/** Shorter keys are no real hash: a truncated or damaged row. */
const MIN_KEY_BYTES = 16;
/**
 * PBKDF2's work grows with the key's length (one run of the iterations a 32 bytes), so a long
 * key would multiply the iteration limit; the forms met have 32 or 64 bytes.
 */
const MAX_KEY_BYTES = 64;

export interface Pbkdf2Hash {
  iterations: number;
  salt: Buffer;
  key: Buffer;
}

function readKey(text: string): Buffer | undefined {
  return /^(?:[0-9a-fA-F]{2})+$/.test(text) ? Buffer.from(text, 'hex') : decodeBase64(text, true);
}

export function parsePbkdf2(stored: string): Pbkdf2Hash | string {
  const fields = stored.split('$');
  if (fields.length !== 4) return 'a PBKDF2 hash has four fields separated by $';
  const [scheme, count, saltText, keyText] = fields as [string, string, string, string];
  if (!/^[1-9]\d{0,9}$/.test(count)) return 'PBKDF2 iteration count is not a positive whole number';
  const iterations = Number(count);
  if (iterations > PBKDF2_MAX_ITERATIONS) return `PBKDF2 iteration count ${iterations} is ${ABOVE_LIMIT} of ${PBKDF2_MAX_ITERATIONS}`;
  const salt = scheme === 'pbkdf2' ? decodeBase64(saltText, true) : Buffer.from(saltText, 'utf8');
  if (!salt?.length) return 'PBKDF2 salt is empty or not base64';
  const key = scheme === 'pbkdf2' ? decodeBase64(keyText, true) : readKey(keyText);
  if (!key) return 'PBKDF2 key is neither hexadecimal nor base64';
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) return `PBKDF2 key has ${key.length} bytes, not ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES}`;
  return { iterations, salt, key };
}

/** True when the password (UTF-8) matches; derived off the event loop, compared in constant time. */
export async function verifyPbkdf2(password: string, stored: string): Promise<boolean> {
  const parsed = parsePbkdf2(stored);
  if (typeof parsed === 'string') throw new Error(parsed);
  const { iterations, salt, key } = parsed;
  const derived = await new Promise<Buffer>((done, fail) =>
    pbkdf2(password, salt, iterations, key.length, 'sha256', (err, out) => (err ? fail(err) : done(out))),
  );
  return timingSafeEqual(derived, key);
}
