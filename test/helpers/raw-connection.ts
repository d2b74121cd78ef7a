// A raw TCP connection to a server on loopback, from a chosen loopback address (all of 127/8
// reaches a server on 127.0.0.1 on Linux), for tests of what the server does with connections:
// what it was sent back, and when it closed.
import net from 'node:net';

/** An open connection: what it was sent so far, and its close. */
export interface Conn {
  socket: net.Socket;
  text: () => string;
  closed: Promise<void>;
  isClosed: () => boolean;
}

/** A raw TCP connection from `from`, told when it closes; `halfOpen`: it never closes its side on its own. */
export function connect(port: number, from: string, halfOpen = false): Promise<Conn> {
  return new Promise((ready, fail) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from, allowHalfOpen: halfOpen });
    let text = '';
    let isClosed = false;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    const closed = new Promise<void>((r) =>
      socket.once('close', () => {
        isClosed = true;
        r();
      }),
    );
    socket.once('error', (e) => (isClosed ? undefined : fail(e)));
    socket.once('connect', () => {
      socket.on('error', () => {}); // a reset shows as a close
      ready({ socket, text: () => text, closed, isClosed: () => isClosed });
    });
  });
}
