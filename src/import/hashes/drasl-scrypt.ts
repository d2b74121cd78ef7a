// drasl's password hashes, as the importer's drasl reader hands them over:
// "drasl-scrypt$" + base64(salt) + "$" + base64(hash). Derived on libuv's thread pool.
import { scrypt, timingSafeEqual } from 'node:crypto';
import { decodeBase64 } from './base64.ts';

/** drasl's fixed parameters (model.go: SCRYPT_N, SCRYPT_r, SCRYPT_p, SCRYPT_BYTES; HashPassword). */
export const DRASL_SCRYPT = { N: 32768, r: 8, p: 1, keyBytes: 32 } as const;
/** scrypt needs 128·N·r bytes (32 MiB here), exactly Node's default cap; twice that leaves room. */
const MAX_MEMORY = 2 * 128 * DRASL_SCRYPT.N * DRASL_SCRYPT.r;

export function parseDraslScrypt(stored: string): { salt: Buffer; hash: Buffer } | string {
  const fields = stored.split('$');
  if (fields.length !== 3 || fields[0] !== 'drasl-scrypt') return 'drasl hash is malformed (expected drasl-scrypt$salt$hash)';
  const [, saltText, hashText] = fields as [string, string, string];
  // drasl leaves both empty for an account that signs in only through OIDC.
  if (saltText === '' && hashText === '') return 'drasl account has no password';
  const salt = decodeBase64(saltText, true);
  const hash = decodeBase64(hashText, true);
  if (!salt?.length || !hash) return 'drasl salt or hash is not base64';
  if (hash.length !== DRASL_SCRYPT.keyBytes) return `drasl hash has ${hash.length} bytes, not ${DRASL_SCRYPT.keyBytes}`;
  return { salt, hash };
}

/** True when the password (UTF-8, as Go's []byte(password)) matches; compared in constant time. */
export async function verifyDraslScrypt(password: string, stored: string): Promise<boolean> {
  const parsed = parseDraslScrypt(stored);
  if (typeof parsed === 'string') throw new Error(parsed);
  const { N, r, p, keyBytes } = DRASL_SCRYPT;
  const derived = await new Promise<Buffer>((done, fail) =>
    scrypt(password, parsed.salt, keyBytes, { N, r, p, maxmem: MAX_MEMORY }, (err, key) => (err ? fail(err) : done(key))),
  );
  return timingSafeEqual(derived, parsed.hash);
}
