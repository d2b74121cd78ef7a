// Access tokens: random UUIDs handed to the player, kept only as SHA-256 digests so a copy of
// the database cannot be used to join as anyone. Tokens are found by digest, so no comparison
// of the secret itself ever happens.
import { createHash, randomUUID } from 'node:crypto';

export function issueToken(): { token: string; digest: string } {
  const token = randomUUID();
  return { token, digest: digestToken(token) };
}

export function digestToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
