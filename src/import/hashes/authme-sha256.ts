// AuthMe's default hash, "$SHA$salt$hash" with hash = hex(SHA-256(hex(SHA-256(password)) + salt)),
// lower-case hex (AuthMe's Sha256.java and HashUtils.sha256). Two SHA-256s take microseconds, so
// it is verified on the main thread.
import { createHash, timingSafeEqual } from 'node:crypto';

const SHAPE = /^\$SHA\$([^$]+)\$([0-9a-fA-F]{64})$/;

export function parseAuthmeSha256(stored: string): { salt: string; hash: Buffer } | string {
  const match = SHAPE.exec(stored);
  if (!match) return 'AuthMe $SHA$ hash is malformed (expected $SHA$salt$ and 64 hexadecimal digits)';
  return { salt: match[1]!, hash: Buffer.from(match[2]!, 'hex') };
}

/** True when the password (UTF-8, Java's getBytes on today's JVMs) matches; compared in constant time. */
export function verifyAuthmeSha256(password: string, stored: string): boolean {
  const parsed = parseAuthmeSha256(stored);
  if (typeof parsed === 'string') throw new Error(parsed);
  const inner = createHash('sha256').update(password, 'utf8').digest('hex');
  return timingSafeEqual(createHash('sha256').update(inner + parsed.salt, 'utf8').digest(), parsed.hash);
}
