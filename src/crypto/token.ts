// Access tokens, invite and reset codes: random secrets handed out, kept only as SHA-256 digests
// so a copy of the database cannot be used to join, register or take over anyone. They are
// found by digest, so no comparison of the secret itself ever happens.
import * as nodeCrypto from 'node:crypto';

/** A new access token: a random UUID, followed by `tail` (what its holder is to read back from it). */
export function issueToken(tail = ''): { token: string; digest: string } {
  const token = nodeCrypto.randomUUID() + tail;
  return { token, digest: digestToken(token) };
}

/**
 * 128 random bits in hex (32 characters): safe in a URL fragment and on a command line (a
 * base64url code may start with "-", which a shell command would take for an option).
 */
export function issueCode(): { code: string; digest: string } {
  const code = nodeCrypto.randomBytes(16).toString('hex');
  return { code, digest: digestToken(code) };
}

export function digestToken(token: string): string {
  // The one-shot hash, half the CPU of a Hash object's three calls. Not imported by name: a Node
  // without it (18) would refuse the whole file before its version check could say why.
  return nodeCrypto.hash('sha256', token, 'hex');
}
