// The address a request came from, for the log and --address-login-limit. Behind a proxy every
// connection comes from the proxy; with --trust-proxy the client is the entry the proxy appended
// to X-Forwarded-For. Only the last entry counts: the ones before it are the client's own word.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The socket's peer, or with `trustProxy` the last X-Forwarded-For entry when it is an IP
 * address (a missing or malformed header falls back to the socket's peer).
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? '';
  if (!trustProxy) return peer;
  const header = req.headers['x-forwarded-for'];
  // Node joins repeated X-Forwarded-For headers with ", "; an array is taken the same way.
  const list = Array.isArray(header) ? header.join(',') : header;
  if (list === undefined) return peer;
  const last = list.slice(list.lastIndexOf(',') + 1).trim();
  return isIP(last) === 0 ? peer : last;
}
