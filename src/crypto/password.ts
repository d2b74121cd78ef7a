// Password hashing with scrypt. A stored hash names its algorithm and parameters
// ("scrypt$N$r$p$salt$key", base64) so the parameters can be raised later: a hash made with
// other parameters verifies as before and is replaced on the next successful login.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * OWASP Password Storage Cheat Sheet, scrypt row "N=2^14 (16 MiB), r=8, p=5": the same work as
 * the N=2^17 row but 16 MiB a hash instead of 128 MiB, so several logins at once fit a small host.
 */
export const SCRYPT_PARAMS = { N: 2 ** 14, r: 8, p: 5 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/** Parameters as a stored hash names them: today's or older ones. */
type ScryptParams = Record<keyof typeof SCRYPT_PARAMS, number>;

function derive(password: string, salt: Buffer, params: ScryptParams, keyBytes = KEY_BYTES): Promise<Buffer> {
  // maxmem: scrypt needs 128*N*r bytes; Node's default cap (32 MiB) would refuse larger N later.
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return new Promise((done, fail) =>
    scrypt(password.normalize('NFC'), salt, keyBytes, options, (err, key) => (err ? fail(err) : done(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  const { N, r, p } = SCRYPT_PARAMS;
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

function parseHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | undefined {
  const [algorithm, n, r, p, salt, key] = stored.split('$');
  if (algorithm !== 'scrypt' || !salt || !key) return undefined;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (![params.N, params.r, params.p].every((x) => Number.isSafeInteger(x) && x > 0)) return undefined;
  return { params, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
}

/** True when `password` matches `stored`; compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) throw new Error('stored password hash has an unknown format');
  // The stored key's own length, so a later change of KEY_BYTES leaves old hashes valid.
  const key = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(key, parsed.key);
}

/** True when `stored` was made with other parameters than today's and should be replaced. */
export function needsRehash(stored: string): boolean {
  const params = parseHash(stored)?.params;
  return !params || params.N !== SCRYPT_PARAMS.N || params.r !== SCRYPT_PARAMS.r || params.p !== SCRYPT_PARAMS.p;
}
