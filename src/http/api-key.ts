// The caller secret (--api-key): every request but the open ones must carry it, as
// `Authorization: Bearer KEY` or as a `key` query parameter (a LauncherServer can only be given URLs).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { queryOf } from './router.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

function presentedKey(req: IncomingMessage, bearerOnly: boolean): string | undefined {
  const bearer = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  if (bearer || bearerOnly) return bearer?.[1];
  return queryOf(req).get('key') ?? undefined;
}

/**
 * A check of the key. Both sides are hashed before a constant-time comparison, so neither the
 * content nor the length of the key leaks through timing.
 */
export function createKeyCheck(key: string, { bearerOnly = false } = {}): (req: IncomingMessage) => boolean {
  const expected = digest(key);
  return (req) => {
    const presented = presentedKey(req, bearerOnly);
    return presented !== undefined && timingSafeEqual(digest(presented), expected);
  };
}
