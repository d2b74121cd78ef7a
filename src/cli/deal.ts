// --workers on systemd's socket: the primary accepts the connections and deals them to the
// workers, every connection of one direct address (IPv6: of one /56) to the same worker, so the
// worker that holds them counts an address's whole limits exactly (node:cluster's own dealing,
// in turn, spreads an address over every worker, each of which can only count a share). Relays'
// and trusted proxies' connections, which carry many clients, are dealt in turn.
//
// Nothing waiting is lost across a restart: the primary listens only once its workers serve and
// stops listening before they stop, so connections made meanwhile wait in the kernel's queue
// (systemd keeps the socket) for the next process. A worker that stops first asks to be dealt no
// more, and finishes what it was dealt before the primary's answer, which comes after them on
// the same channel. A connection is the primary's until its worker says it took it (which it
// does before reading any of it): one dealt to a worker that ended before then is dealt again.
import { Server as NetServer, Socket, type AddressInfo } from 'node:net';
import type { Worker } from 'node:cluster';
import { perAddressKey } from '../http/client-address.ts';
import { groupOf } from '../connections.ts';
import type { Dealt, ListenAddress } from '../serve.ts';
import { SYSTEMD_SOCKET_BACKLOG } from './systemd-socket.ts';
import { toPrimary } from './channel.ts';

/** What passes between the primary and a worker it deals to, on node:cluster's channel. */
type DealMessage =
  | { mcauthDeal: 'connection'; id: number } // primary: one connection, as the message's handle
  | { mcauthDeal: 'taken'; id: number } // worker: I hold it now
  | { mcauthDeal: 'stopping' } // worker: deal me no more
  | { mcauthDeal: 'done' }; // primary: nothing more comes after this

const isDealMessage = (m: unknown): m is DealMessage => typeof m === 'object' && m !== null && 'mcauthDeal' in m;

/** A 32-bit FNV-1a hash of `text`: an address's place among the workers. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export interface Dealer {
  /** Starts accepting (once the workers serve); resolves to where the socket listens. */
  listen: () => Promise<ListenAddress>;
  /** Gives `worker` the place `replacing` had, or a free one: from now on it is dealt connections. Whether it got one. */
  place: (worker: Worker, replacing?: Worker) => boolean;
  /** Answers a worker's deal messages (wired to every worker's 'message'). */
  onMessage: (worker: Worker, message: unknown) => void;
  /** Takes a worker whose channel closed (it ended) out of its place; what it did not take goes to another. */
  remove: (worker: Worker) => void;
  /** Stops accepting: what comes next waits in the kernel's queue for the next process. */
  close: () => void;
}

/** How long a worker has to say it took a connection; then it is closed (a worker stuck, or one that refused the handle). */
const TAKE_MS = 10_000;

/** A connection dealt and not yet taken, and what closes it if it is not taken in time. */
interface Dealing {
  socket: Socket;
  timer: NodeJS.Timeout;
}

/**
 * Deals the connections of systemd's socket `fd` to `places` workers. `trusted`: relays and
 * trusted proxies, by the peer's address, which are dealt in turn. `onError`: an error of the
 * listening socket after it listens (a failed accept: out of descriptors, say).
 */
export function createDealer(fd: number, places: number, trusted: (peer: string) => boolean, onError: (err: Error) => void): Dealer {
  const workers: (Worker | undefined)[] = new Array<Worker | undefined>(places).fill(undefined);
  /** Per worker, what was dealt to it and not yet taken, by id. */
  const dealings = new Map<Worker, Map<number, Dealing>>();
  /** Connections accepted while no worker had a place (all had ended), up to the socket's backlog: dealt to the next placed. */
  const waiting: Socket[] = [];
  let nextId = 0;
  let turn = 0;

  /** The worker at place `start`, else the next one placed after it that can still be sent to. */
  const from = (start: number): Worker | undefined => {
    for (let i = 0; i < places; i++) {
      const worker = workers[(start + i) % places];
      if (worker?.isConnected()) return worker;
    }
    return undefined;
  };

  const unplace = (worker: Worker): void => {
    const i = workers.indexOf(worker);
    if (i >= 0) workers[i] = undefined;
  };

  const deal = (socket: Socket): void => {
    const peer = socket.remoteAddress;
    if (peer === undefined) return void socket.destroy();
    const worker = trusted(peer) ? from(turn++ % places) : from(hash(groupOf(perAddressKey(peer))) % places);
    if (!worker) return void (waiting.length < SYSTEMD_SOCKET_BACKLOG ? waiting.push(socket) : socket.destroy());
    const id = nextId++;
    const pending = dealings.get(worker) ?? new Map<number, Dealing>();
    const timer = setTimeout(() => {
      if (pending.delete(id)) socket.destroy();
    }, TAKE_MS).unref();
    dealings.set(worker, pending.set(id, { socket, timer }));
    // Kept open here until the worker says it took it: its copy is then the only one.
    worker.send({ mcauthDeal: 'connection', id }, socket, { keepOpen: true }, (err) => {
      if (!err || !pending.delete(id)) return;
      clearTimeout(timer);
      deal(socket);
    });
  };

  const listener = new NetServer({ pauseOnConnect: true }, deal);
  let at: ListenAddress | undefined;

  return {
    listen: () =>
      new Promise((listening, fail) => {
        listener.once('error', (err) => fail(new Error(`cannot listen on the socket systemd passed as fd ${fd}: ${err.message}`)));
        listener.listen({ fd }, SYSTEMD_SOCKET_BACKLOG, () => {
          listener.removeAllListeners('error').on('error', onError);
          const { address: host, port } = listener.address() as AddressInfo;
          at = { host, port, systemdFd: fd };
          listening(at);
        });
      }),
    place(worker, replacing) {
      const i = replacing && workers.includes(replacing) ? workers.indexOf(replacing) : workers.indexOf(undefined);
      if (i < 0) return false;
      workers[i] = worker;
      for (const socket of waiting.splice(0)) deal(socket);
      return true;
    },
    onMessage(worker, message) {
      if (!isDealMessage(message)) return;
      if (message.mcauthDeal === 'taken') {
        const pending = dealings.get(worker);
        const dealing = pending?.get(message.id);
        if (!dealing) return;
        clearTimeout(dealing.timer);
        dealing.socket.destroy();
        pending!.delete(message.id);
      }
      if (message.mcauthDeal === 'stopping') {
        unplace(worker);
        worker.send({ mcauthDeal: 'done' }, undefined, {}, () => {});
      }
    },
    remove(worker) {
      unplace(worker);
      const pending = dealings.get(worker);
      dealings.delete(worker);
      // Its channel is closed, every message it sent read: what it did not say it took, it never
      // read from (it says so before it reads), so another worker can serve it.
      for (const { socket, timer } of pending?.values() ?? []) {
        clearTimeout(timer);
        deal(socket);
      }
      pending?.clear();
    },
    close() {
      if (at) listener.close();
      for (const socket of waiting.splice(0)) socket.destroy();
    },
  };
}

/** In a worker: takes the connections its primary deals it (from the primary's first message on). */
export function joinDeal(): Dealt {
  let take: ((socket: Socket) => void) | undefined;
  /** Dealt before `start`: taken then. */
  const early: Socket[] = [];
  const open = new Set<Socket>();
  let primaryDone = false;
  let drained: () => void = () => {};
  const closed = new Promise<void>((resolve) => (drained = resolve));
  const check = (): void => {
    if (primaryDone && open.size === 0) drained();
  };
  const over = (): void => {
    primaryDone = true;
    check();
  };
  process.once('disconnect', over);
  process.on('message', (message: unknown, handle: unknown) => {
    if (!isDealMessage(message)) return;
    if (message.mcauthDeal === 'connection' && handle instanceof Socket) {
      // As node:http's own listener has them: no Nagle delay, and a client's end of sending is not the end of the answer.
      handle.setNoDelay(true);
      handle.allowHalfOpen = true;
      open.add(handle);
      handle.once('close', () => {
        open.delete(handle);
        check();
      });
      // 'taken' is written in the turn the connection arrives, before this process next polls for
      // input (unless the channel is backed up), so a worker that ends before saying it has read
      // nothing of what is dealt again; the server gets it once the message is sent.
      toPrimary({ mcauthDeal: 'taken', id: message.id }, () => {
        if (take) take(handle);
        else early.push(handle);
      });
    }
    if (message.mcauthDeal === 'done') over();
  });
  return {
    start: (t) => {
      take = t;
      for (const socket of early.splice(0)) t(socket);
    },
    end: () => {
      // A primary that has gone deals nothing more.
      toPrimary({ mcauthDeal: 'stopping' }, (err) => {
        if (err) over();
      });
      return closed;
    },
  };
}
