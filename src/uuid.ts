// Player UUIDs: accepted dashed or undashed in any case, stored and answered dashed lower case.
import { createHash } from 'node:crypto';

const UNDASHED = /^[0-9a-f]{32}$/;
const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function dash(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The canonical (dashed, lower-case) form of a UUID, or undefined when `text` is not one. */
export function parseUuid(text: string): string | undefined {
  // The dashed form, the one callers send, is kept as it came (lower-cased) rather than undashed
  // and dashed again, which took five sixths of the check's CPU.
  const lower = text.toLowerCase();
  return CANONICAL.test(lower) ? lower : UNDASHED.test(lower) ? dash(lower) : undefined;
}

/** The UUID offline-mode servers give a player: version 3 (MD5) of "OfflinePlayer:<name>". */
export function offlineUuid(name: string): string {
  const bytes = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x30;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return dash(bytes.toString('hex'));
}
