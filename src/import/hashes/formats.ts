// The password hashes of other software that an import keeps: which format a string is, and its
// verification. A kept hash is verified at the player's next login and then replaced by this
// service's own (src/crypto/password.ts). Passwords go in as their UTF-8 bytes, not normalised:
// the other software hashed them that way.
import { parseArgon2, runtimeArgon2, verifyArgon2 } from './argon2.ts';
import { parseAuthmeSha256, verifyAuthmeSha256 } from './authme-sha256.ts';
import { parseBcrypt } from './bcrypt.ts';
import { parseDraslScrypt, verifyDraslScrypt } from './drasl-scrypt.ts';
import { parsePbkdf2, verifyPbkdf2 } from './pbkdf2.ts';
import { parsePhpass } from './phpass.ts';
import { ABOVE_LIMIT, UnsupportedHashError } from './errors.ts';
import type { HashWorkers } from './worker.ts';

export type ForeignFormat = 'bcrypt' | 'authme-sha256' | 'pbkdf2-sha256' | 'phpass' | 'argon2' | 'drasl-scrypt';

export type Recognized = {
  format: ForeignFormat;
  stored: string;
  /** Set when this runtime cannot verify the hash yet (it is kept all the same). */
  needs?: 'argon2';
};

/** Each format by how its strings begin, with its parser (a string is a problem). */
const FORMATS: { prefix: RegExp; format: ForeignFormat; parse: (hash: string) => object | string }[] = [
  { prefix: /^\$2[a-z]?\$/, format: 'bcrypt', parse: parseBcrypt },
  { prefix: /^\$SHA\$/, format: 'authme-sha256', parse: parseAuthmeSha256 },
  { prefix: /^pbkdf2(?:_sha256)?\$/, format: 'pbkdf2-sha256', parse: parsePbkdf2 },
  { prefix: /^\$[PH]\$/, format: 'phpass', parse: parsePhpass },
  { prefix: /^\$argon2(?:id|i|d)\$/, format: 'argon2', parse: parseArgon2 },
  { prefix: /^drasl-scrypt\$/, format: 'drasl-scrypt', parse: parseDraslScrypt },
];

/** XenForo keeps its bcrypt hash in a PHP-serialized array: a:1:{s:4:"hash";s:60:"$2y$...";}. */
const XENFORO = /^a:1:\{s:4:"hash";s:(\d+):"([^"]*)";\}$/;

function unwrapXenForo(hash: string): string | { problem: string } {
  const match = XENFORO.exec(hash);
  if (!match) return { problem: "a PHP-serialized hash other than XenForo's bcrypt form" };
  const [, length, inner] = match as unknown as [string, string, string];
  if (Number(length) !== inner.length) return { problem: 'XenForo hash declares a length other than its own' };
  return inner;
}

/**
 * The longest hash taken. Every format met is under 200 characters; a longer one is no real hash,
 * and its salt or key could make one check cost what it likes (a salt hashed on the main thread).
 */
export const MAX_HASH_CHARS = 512;

/** What an imported hash string is: its format and the exact string to store; or why it cannot be taken. */
export function recognizeHash(hash: string): Recognized | { problem: string } {
  if (hash === '') return { problem: 'empty hash' };
  if (hash.length > MAX_HASH_CHARS) return { problem: `a hash longer than ${MAX_HASH_CHARS} characters` };
  if (hash.startsWith('a:')) {
    const inner = unwrapXenForo(hash);
    if (typeof inner !== 'string') return inner;
    const result = recognizeHash(inner);
    if ('problem' in result) return { problem: `XenForo hash: ${result.problem}` };
    return result.format === 'bcrypt' ? result : { problem: 'XenForo hash is not bcrypt' };
  }
  const known = FORMATS.find(({ prefix }) => prefix.test(hash));
  if (!known) return { problem: 'unknown hash format' };
  const parsed = known.parse(hash);
  if (typeof parsed === 'string') return { problem: parsed };
  return known.format === 'argon2' && !runtimeArgon2 ? { format: 'argon2', stored: hash, needs: 'argon2' } : { format: known.format, stored: hash };
}

/** The format of a stored string (already recognised), or undefined when it is not a foreign hash (e.g. `scrypt$...`). */
export function foreignFormatOf(stored: string): ForeignFormat | undefined {
  const result = recognizeHash(stored);
  return 'format' in result && result.stored === stored ? result.format : undefined;
}

/** Verifies in constant time; runs off the event loop as above; throws UnsupportedHashError where the runtime lacks what the format needs. */
export async function verifyForeignHash(password: string, stored: string, workers: HashWorkers): Promise<boolean> {
  const format = foreignFormatOf(stored);
  switch (format) {
    case 'bcrypt':
    case 'phpass':
      return workers.run(format, password, stored);
    case 'authme-sha256':
      return verifyAuthmeSha256(password, stored);
    case 'pbkdf2-sha256':
      return verifyPbkdf2(password, stored);
    case 'argon2':
      return verifyArgon2(password, stored);
    case 'drasl-scrypt':
      return verifyDraslScrypt(password, stored);
    case undefined: {
      const result = recognizeHash(stored);
      const problem = 'problem' in result ? result.problem : 'stored unwrapped';
      // Imported under a higher limit: checking it would hold a hash slot too long; a reset link sets a new password.
      if (problem.includes(ABOVE_LIMIT)) throw new UnsupportedHashError(`${problem}; an admin can give the player a reset link`);
      throw new Error(`not a foreign hash this service verifies: ${problem}`);
    }
  }
}
