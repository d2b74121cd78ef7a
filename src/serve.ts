// `serve`: the HTTP server over an open store, started and stopped as one unit.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toServiceOptions, type ServeConfig } from './cli/options.ts';
import { answerClientError, createApp } from './http/app.ts';
import { normalizeBasePath } from './http/router.ts';
import { createService } from './service/service.ts';
import { MEMORY_DB } from './store/open.ts';
import type { Store } from './store/store.ts';
import { CONNECTIONS_CHECK_INTERVAL_MS, STOP_TIMEOUT_MS } from './limits.ts';

export interface RunningServer {
  /** The one line that says where it listens and what it serves. */
  banner: string;
  port: number;
  /** Stops accepting, lets requests in flight finish (bounded), then closes the store. */
  stop: () => Promise<void>;
}

export async function startServer(config: ServeConfig, store: Store, logError: (message: string, err: unknown) => void): Promise<RunningServer> {
  const service = createService(store, toServiceOptions(config));
  if (config.publicUrl === '' && (await service.countTextures()) > 0) {
    throw new Error('the database holds hosted skins or capes, and answers must carry their addresses: give --public-url (the address players\' games reach this service at)');
  }
  await service.warmUp();
  const basePath = normalizeBasePath(config.basePath);
  const server = createServer(
    {
      headersTimeout: config.headersTimeout * 1000,
      requestTimeout: config.requestTimeout * 1000,
      keepAliveTimeout: config.keepAliveTimeout * 1000,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
    createApp(service, {
      basePath,
      apiKey: config.apiKey,
      addressLoginLimit: config.addressLoginLimit,
      adminToken: config.adminToken,
      hostsTextures: config.publicUrl !== '',
      logError,
    }),
  );
  server.maxConnections = config.maxConnections;
  server.on('clientError', answerClientError);

  await new Promise<void>((listening, fail) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      fail(new Error(`cannot listen on ${config.host}:${config.port}: ${err.code === 'EADDRINUSE' ? 'the address is in use' : err.message}`)),
    );
    server.listen(config.port, config.host, () => listening());
  });

  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const users = await store.countUsers();
  const where = config.db === MEMORY_DB ? 'in memory' : `in ${config.db}`;
  return {
    banner: `mcauth listening on http://${host}:${port}${basePath} (${users} ${users === 1 ? 'user' : 'users'} ${where})`,
    port,
    stop: async () => {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((done) => (timer = setTimeout(done, STOP_TIMEOUT_MS)));
      await Promise.race([closed, timeout]);
      clearTimeout(timer);
      await store.close();
    },
  };
}
