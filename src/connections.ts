// Who holds the server's connections, and which go when there is no room. Relays and trusted
// proxies (by their address) and connections whose requests carry the API key are counted apart
// from direct callers: nothing direct callers open counts against them or refuses them. Every
// accepted socket is counted until it closes, so no address can run the process out of file
// descriptors. When the direct callers hold --max-connections, room is made by closing a
// connection of the address holding the most (IPv6: its /56, where one network's many /64s
// gather), one that has sent nothing before one that is idle between requests; only when every
// other connection has a request in flight does the newest of the biggest holder go, request and
// all. Past an address's own share (per /64), a connection has a moment to send a request, which
// is refused unless it carries the API key.
import type { Socket } from 'node:net';
import { perAddressKey } from './http/client-address.ts';

/** Why a request is refused for want of room: the whole server's, or its address's share. */
export type ConnectionRefusal = 'connections' | 'address_connections';

export interface ConnectionRules {
  /** Direct callers' connections at once (--max-connections); the relays', proxies' and keyed ones' are bounded by as many of their own. */
  max: number;
  /** One direct address's connections (its /64 for IPv6), past which a new one must carry the API key. */
  perAddress: number;
  /** Relays and trusted proxies, by the peer's address. */
  trusted: (peer: string) => boolean;
  /** How long a connection past its address's share may take to send its request before it is closed. */
  graceMs: number;
}

export interface Connections {
  /** Counts a new connection until it closes, closing others (or it) to keep within the rules. */
  accept: (socket: Socket) => void;
  /** A request began on `socket`: it is not closed to make room until it is over. */
  began: (socket: Socket) => void;
  /** The request on `socket` is over; the connection may stay open, idle. */
  ended: (socket: Socket) => void;
  /**
   * What refuses the request just begun on `socket`; undefined when it is served. `keyed`: it
   * carries the API key, and its connection is from now on counted with the relays'.
   */
  admit: (socket: Socket, keyed: boolean) => ConnectionRefusal | undefined;
}

/** A direct caller's connection. */
interface Direct {
  /** The group it is ranked in when room is made (see groupOf). */
  group: string;
  /** Whether it has sent a request, and how many of its requests are not over (pipelined ones too). */
  spoke: boolean;
  inFlight: number;
  /** Past its address's share: refused unless its request carries the API key. */
  pastShare: boolean;
  /** Closes it when it sends no request in time (past its address's share). */
  grace?: NodeJS.Timeout;
  /** Counted while the direct callers held all they may and nothing could be closed: its request is refused. */
  pastMax: boolean;
  /** Takes it out of the direct callers' counts. */
  leave: () => void;
}

/** An IPv6 /64 as its /56, where a network's /64s gather; an IPv4 address as itself. */
export function groupOf(address: string): string {
  const v6 = /^([0-9a-f]+:[0-9a-f]+:[0-9a-f]+):([0-9a-f]+)::\/64$/.exec(address);
  return v6 ? `${v6[1]}:${(parseInt(v6[2]!, 16) & 0xff00).toString(16)}::/56` : address;
}

/** Adds `socket` to the set under `key`; the function returned takes it out again. */
function join(sets: Map<string, Set<Socket>>, key: string, socket: Socket): () => void {
  const set = sets.get(key) ?? new Set<Socket>();
  sets.set(key, set.add(socket));
  return () => {
    set.delete(socket);
    if (set.size === 0) sets.delete(key);
  };
}

export function createConnections({ max, perAddress, trusted, graceMs }: ConnectionRules): Connections {
  const direct = new Map<Socket, Direct>();
  const byAddress = new Map<string, Set<Socket>>();
  const byGroup = new Map<string, Set<Socket>>();
  /** Sockets counted with the relays', and those of them past their bound. */
  const others = new Set<Socket>();
  const othersPastMax = new WeakSet<Socket>();

  const countApart = (socket: Socket): void => {
    others.add(socket);
    if (others.size > max) othersPastMax.add(socket);
    socket.once('close', () => others.delete(socket));
  };

  /** Closes a direct caller's connection, no longer counted from now (its close event comes a turn later). */
  const close = (socket: Socket): void => {
    direct.get(socket)?.leave();
    socket.destroy();
  };

  /** In `sockets`, the oldest that has sent nothing, else the oldest idle one; never `newcomer`. */
  const closable = (sockets: Set<Socket>, newcomer: Socket): Socket | undefined => {
    let idle: Socket | undefined;
    for (const socket of sockets) {
      const info = direct.get(socket)!;
      if (socket === newcomer) continue;
      if (!info.spoke) return socket;
      if (info.inFlight === 0) idle ??= socket;
    }
    return idle;
  };

  /**
   * The connection to close to make room for `newcomer` (never itself: it is answered): one of
   * the group holding the most that has one that has sent nothing or is idle. When every other
   * connection has a request in flight (slow bodies, say), the newest of the group holding the
   * most, if it holds more than the newcomer's: no holder can keep the others out for as long as
   * its requests may take.
   */
  const toClose = (newcomer: Socket): Socket | undefined => {
    let chosen: Socket | undefined;
    let most = 0;
    for (const sockets of byGroup.values()) {
      const candidate = sockets.size > most ? closable(sockets, newcomer) : undefined;
      if (candidate === undefined) continue;
      chosen = candidate;
      most = sockets.size;
    }
    if (chosen) return chosen;
    let biggest = byGroup.get(direct.get(newcomer)!.group)!;
    for (const sockets of byGroup.values()) {
      if (sockets.size > biggest.size) biggest = sockets;
    }
    return biggest.has(newcomer) ? undefined : [...biggest].at(-1);
  };

  return {
    accept(socket) {
      const peer = socket.remoteAddress ?? '';
      if (trusted(peer)) return countApart(socket);
      const address = perAddressKey(peer);
      const group = groupOf(address);
      const leaveAddress = join(byAddress, address, socket);
      const leaveGroup = join(byGroup, group, socket);
      const info: Direct = {
        group,
        spoke: false,
        inFlight: 0,
        pastShare: byAddress.get(address)!.size > perAddress,
        pastMax: false,
        leave: () => {
          clearTimeout(info.grace);
          direct.delete(socket);
          leaveAddress();
          leaveGroup();
        },
      };
      direct.set(socket, info);
      socket.once('close', () => direct.get(socket)?.leave());
      if (info.pastShare) info.grace = setTimeout(() => socket.destroy(), graceMs).unref();
      if (direct.size <= max) return;
      const closing = toClose(socket);
      // Nothing to close: every other connection is the newcomer's group's, or no bigger than it
      // and busy. Past twice the bound, the newcomer goes at once, so the process never runs out
      // of descriptors.
      if (closing) close(closing);
      else if (direct.size > 2 * max) close(socket);
      else info.pastMax = true;
    },
    began(socket) {
      const info = direct.get(socket);
      if (!info) return;
      // It has sent a request in time: its grace is over (a refusal, if any, comes with its answer).
      clearTimeout(info.grace);
      info.spoke = true;
      info.inFlight++;
    },
    ended(socket) {
      const info = direct.get(socket);
      if (info) info.inFlight--;
    },
    admit(socket, keyed) {
      const info = direct.get(socket);
      if (!info) return othersPastMax.has(socket) ? 'connections' : undefined;
      if (keyed) {
        info.leave();
        countApart(socket);
        return othersPastMax.has(socket) ? 'connections' : undefined;
      }
      if (info.pastShare) return 'address_connections';
      return info.pastMax ? 'connections' : undefined;
    },
  };
}
