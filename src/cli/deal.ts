// --workers on systemd's socket: the primary accepts the connections and deals them to the
// workers, every connection of one direct address (IPv6: of one /56) to the same worker, so the
// worker that holds them counts an address's whole limits exactly (node:cluster's own dealing,
// in turn, spreads an address over every worker, each of which can only count a share). Relays'
// and trusted proxies' connections, which carry many clients, are dealt in turn.
//
// Nothing is lost across a restart: the primary stops accepting before its workers stop, so
// connections made meanwhile wait in the kernel's queue (systemd keeps the socket) for the next
// process. A worker that stops first asks to be dealt no more, and finishes what it was dealt
// before the primary's answer, which comes after them on the same channel.
import { Server as NetServer, Socket, type AddressInfo } from 'node:net';
import type { Worker } from 'node:cluster';
import { perAddressKey } from '../http/client-address.ts';
import { groupOf } from '../connections.ts';
import type { ListenAddress } from '../serve.ts';
import { SYSTEMD_SOCKET_BACKLOG } from './systemd-socket.ts';

/** What passes between the primary and a worker it deals to, on node:cluster's channel. */
type DealMessage =
  | { mcauthDeal: 'ready' } // worker: deal to me once I listen
  | { mcauthDeal: 'at'; at: ListenAddress } // primary: where the connections come from
  | { mcauthDeal: 'connection' } // primary: one connection, as the message's handle
  | { mcauthDeal: 'stopping' } // worker: deal me no more
  | { mcauthDeal: 'done' }; // primary: nothing more comes after this

export const isDealMessage = (m: unknown): m is DealMessage => typeof m === 'object' && m !== null && 'mcauthDeal' in m;

/** A 32-bit FNV-1a hash of `text`: an address's place among the workers. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export interface Dealer {
  /** Where the socket listens. */
  at: ListenAddress;
  /** Gives `worker` the place `replacing` had, or a free one: from now on it is dealt connections. */
  place: (worker: Worker, replacing?: Worker) => void;
  /** Answers a worker's deal messages (wired to every worker's 'message'). */
  onMessage: (worker: Worker, message: unknown) => void;
  /** Takes a worker that ended out of its place. */
  remove: (worker: Worker) => void;
  /** Stops accepting: what comes next waits in the kernel's queue for the next process. */
  close: () => void;
}

/**
 * Listens on systemd's socket `fd` and deals its connections to `places` workers. `trusted`:
 * relays and trusted proxies, by the peer's address, which are dealt in turn.
 */
export function createDealer(fd: number, places: number, trusted: (peer: string) => boolean): Promise<Dealer> {
  const workers: (Worker | undefined)[] = new Array<Worker | undefined>(places).fill(undefined);
  /** Connections accepted while no worker had a place (all had ended): dealt to the next placed. */
  const waiting: Socket[] = [];
  let turn = 0;

  /** The worker at place `start`, else the next one placed after it. */
  const from = (start: number): Worker | undefined => {
    for (let i = 0; i < places; i++) {
      const worker = workers[(start + i) % places];
      if (worker) return worker;
    }
    return undefined;
  };

  const remove = (worker: Worker): void => {
    const i = workers.indexOf(worker);
    if (i >= 0) workers[i] = undefined;
  };

  const deal = (socket: Socket): void => {
    const peer = socket.remoteAddress;
    if (peer === undefined) return void socket.destroy();
    const worker = trusted(peer) ? from(turn++ % places) : from(hash(groupOf(perAddressKey(peer))) % places);
    if (!worker) return void waiting.push(socket);
    // Once sent, the handle is the worker's and this process's copy is closed; one that could
    // not be sent (the worker has just ended) is closed, as a worker's own would be.
    worker.send({ mcauthDeal: 'connection' }, socket, {}, (err) => {
      if (err) socket.destroy();
    });
  };

  const listener = new NetServer({ pauseOnConnect: true }, deal);
  return new Promise((listening, fail) => {
    listener.once('error', (err) => fail(new Error(`cannot listen on the socket systemd passed as fd ${fd}: ${err.message}`)));
    listener.listen({ fd, backlog: SYSTEMD_SOCKET_BACKLOG }, () => {
      const { address: host, port } = listener.address() as AddressInfo;
      const at: ListenAddress = { host, port, systemdFd: fd };
      listening({
        at,
        place(worker, replacing) {
          const i = replacing && workers.includes(replacing) ? workers.indexOf(replacing) : workers.indexOf(undefined);
          if (i >= 0) workers[i] = worker;
          for (const socket of waiting.splice(0)) deal(socket);
        },
        onMessage(worker, message) {
          if (!isDealMessage(message)) return;
          if (message.mcauthDeal === 'ready') worker.send({ mcauthDeal: 'at', at });
          if (message.mcauthDeal === 'stopping') {
            remove(worker);
            worker.send({ mcauthDeal: 'done' }, undefined, {}, () => {});
          }
        },
        remove,
        close() {
          listener.close();
          for (const socket of waiting.splice(0)) socket.destroy();
        },
      });
    });
  });
}

/** In a worker the primary deals to: where the connections come from, and the deal itself. */
export interface Dealt {
  at: ListenAddress;
  /** From now on `take` gets each connection the primary deals this worker. */
  start: (take: (socket: Socket) => void) => void;
  /**
   * Asks the primary to deal no more; resolves once it will not (or has gone) and every
   * connection it dealt has closed: what a listener's close does for its own connections.
   */
  end: () => Promise<void>;
}

/** In a worker: asks the primary to deal connections to it; resolves with where they come from. */
export function joinDeal(): Promise<Dealt> {
  let take: ((socket: Socket) => void) | undefined;
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
  return new Promise((ready) => {
    process.on('message', (message: unknown, handle: unknown) => {
      if (!isDealMessage(message)) return;
      if (message.mcauthDeal === 'at') {
        ready({
          at: message.at,
          start: (t) => (take = t),
          end: () => {
            // A primary that has gone deals nothing more.
            process.send?.({ mcauthDeal: 'stopping' }, undefined, {}, (err) => {
              if (err) over();
            });
            return closed;
          },
        });
      }
      if (message.mcauthDeal === 'connection' && handle instanceof Socket) {
        if (!take) return void handle.destroy();
        open.add(handle);
        handle.once('close', () => {
          open.delete(handle);
          check();
        });
        take(handle);
      }
      if (message.mcauthDeal === 'done') over();
    });
    process.send?.({ mcauthDeal: 'ready' }, undefined, {}, () => {});
  });
}
