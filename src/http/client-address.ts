// Who is calling, for the log and the per-client rules. Behind a proxy every connection comes
// from the proxy: from a peer listed in --trust-proxy the client is the entry the proxy appended
// to X-Forwarded-For; only the last entry counts, the ones before it are the client's own word.
// A relay (a LauncherServer, a web cabinet) calls for every player of a community from one
// address: per-address rules would refuse them all, so they never apply to one.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Who is calling, for per-client rules. */
export interface Caller {
  /** The client address (IPv6 cut to its /64, as text like "2001:db8:1:2::/64"; IPv4 and IPv4-mapped as dotted quad). For a relay, the relay's address. */
  address: string;
  /** A relay (valid API key, or its address in --relay and not a trusted proxy): per-address rules do not apply. */
  relay: boolean;
  /** On a trusted proxy's connection (forwarded by it, or its own): shared with its other clients. */
  proxied: boolean;
}

/** Whether an address is in a list of addresses and CIDR ranges (--relay, --trust-proxy). */
export type AddressList = (address: string) => boolean;

/**
 * An address as text of its bits behind its family ("4" and 32, or "6" and 128), so a CIDR range
 * is a prefix; IPv4-mapped IPv6 (::ffff:1.2.3.4) is the IPv4 address it carries.
 */
function bits(text: string): string | undefined {
  const address = text.replace(/%.*$/, '').replace(/^::ffff:(?=[\d.]+$)/i, '');
  const family = isIP(address);
  if (family === 4) return '4' + address.split('.').map((n) => Number(n).toString(2).padStart(8, '0')).join('');
  if (family !== 6) return undefined;
  // A dotted IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) as the two groups it is.
  const group = (high: string, low: string): string => (Number(high) * 256 + Number(low)).toString(16);
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) => `${group(a, b)}:${group(c, d)}`);
  const [head, tail] = hex.split('::').map((part) => (part === '' ? [] : part.split(':')));
  const groups = tail === undefined ? head! : [...head!, ...Array<string>(8 - head!.length - tail.length).fill('0'), ...tail];
  return '6' + groups.map((g) => parseInt(g, 16).toString(2).padStart(16, '0')).join('');
}

/** A comma-separated list of addresses and CIDR ranges as a test; throws naming an entry that is neither. */
export function addressList(text: string): AddressList {
  const prefixes = text.split(',').filter((e) => e.trim() !== '').map((entry) => {
    const [, address = '', length] = /^([^/]*)(?:\/(\d{1,3}))?$/.exec(entry.trim()) ?? [];
    const all = bits(address);
    const n = length === undefined ? Infinity : Number(length);
    if (all === undefined || !(n < all.length || n === Infinity)) {
      throw new Error(`${JSON.stringify(entry.trim())} is not an IP address or CIDR range`);
    }
    return all.slice(0, n + 1);
  });
  return (address) => prefixes.some((p) => bits(address)?.startsWith(p));
}

/** The last X-Forwarded-For entry, when it is an IP address. Node joins repeated headers with ", ". */
function forwardedFor(req: IncomingMessage): string | undefined {
  const list = String(req.headers['x-forwarded-for'] ?? ''); // (an array, were it one, as "a,b")
  const last = list.slice(list.lastIndexOf(',') + 1).trim();
  return isIP(last) === 0 ? undefined : last;
}

/** An address as per-address rules count it: an IPv6 client holds a whole /64 (RFC 6177), so it is one. */
export function perAddressKey(address: string): string {
  const b = bits(address);
  if (b === undefined || b[0] === '4') return b === undefined ? address : address.replace(/^::ffff:/i, '');
  return `${[1, 17, 33, 49].map((i) => parseInt(b.slice(i, i + 16), 2).toString(16)).join(':')}::/64`;
}

/** A connection's peer, whether it is a trusted proxy, and it as a caller: worked out at its first request, not at each. */
const peers = new WeakMap<object, { peer: string; proxy: boolean; caller: Caller }>();

/** Who made `req`, given the relays, the trusted proxies, and whether it carries the valid --api-key. */
export function callerOf(req: IncomingMessage, relays: AddressList, proxies: AddressList, withApiKey: boolean): Caller {
  if (!peers.has(req.socket)) {
    const peer = req.socket.remoteAddress ?? '';
    const proxy = proxies(peer);
    peers.set(req.socket, { peer, proxy, caller: { address: perAddressKey(peer), relay: relays(peer) && !proxy, proxied: proxy } });
  }
  const { peer, proxy, caller } = peers.get(req.socket)!;
  const client = (proxy && forwardedFor(req)) || peer;
  if (client === peer) return withApiKey ? { ...caller, relay: true } : caller;
  return { address: perAddressKey(client), relay: withApiKey || (relays(client) && !proxies(client)), proxied: true };
}
