// A TCP relay on a loopback port to another, which can be cut as a host that vanished is: from
// then on it passes no byte either way and closes nothing, on the connections it holds and on new
// ones, as a powered-off host or a cut cable sends no reset. Tests of a database host lost so.
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Relay {
  port: number;
  /** From now on nothing passes, and nothing is closed until `close`. */
  cut: () => void;
  close: () => Promise<void>;
}

export async function startRelay(targetPort: number): Promise<Relay> {
  let cut = false;
  const sockets = new Set<Socket>();
  const hold = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  // Half-open allowed: a client's FIN is not answered for it, as a vanished host would not.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    hold(client);
    if (cut) return void client.pause();
    const target = connect({ port: targetPort, host: '127.0.0.1', allowHalfOpen: true });
    hold(target);
    const pass = (from: Socket, to: Socket): void => {
      from.on('data', (chunk) => void (cut || to.write(chunk)));
      from.on('end', () => void (cut || to.end()));
    };
    pass(client, target);
    pass(target, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      cut = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
