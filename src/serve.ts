// `serve`: the HTTP server over an open store, started and stopped as one unit.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toServiceOptions, type ServeConfig } from './cli/options.ts';
import { answerClientError, createApp } from './http/app.ts';
import { normalizeBasePath } from './http/router.ts';
import { createService } from './service/service.ts';
import { MEMORY_DB } from './store/open.ts';
import type { Store } from './store/store.ts';
import { CONNECTIONS_CHECK_INTERVAL_MS, IDLE_SWEEP_MS } from './limits.ts';
import type { Logger } from './ops/log.ts';
import { createMetrics } from './ops/metrics.ts';

export interface RunningServer {
  /** The one line that says where it listens and what it serves. */
  banner: string;
  port: number;
  /** Requests begun and not yet over. */
  inFlight: () => number;
  /**
   * Stops accepting connections, lets requests in flight finish (for up to --shutdown-timeout,
   * then cuts their connections), closes kept-alive connections as they fall idle, then closes
   * the store. Resolves to the number of requests cut off.
   */
  stop: () => Promise<number>;
}

/** The line that says where the server listens and what it serves (for all its workers, if several). */
export function listeningLine(config: ServeConfig, port: number, users: number, workers = 1): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const where = config.db === MEMORY_DB ? 'in memory' : `in ${config.db}`;
  const cluster = workers > 1 ? `, ${workers} workers` : '';
  return `mcauth listening on http://${host}:${port}${normalizeBasePath(config.basePath)} (${users} ${users === 1 ? 'user' : 'users'} ${where}${cluster})`;
}

export async function startServer(config: ServeConfig, store: Store, log: Logger): Promise<RunningServer> {
  const service = createService(store, toServiceOptions(config));
  if (config.publicUrl === '' && (await service.countTextures()) > 0) {
    throw new Error('the database holds hosted skins or capes, and answers must carry their addresses: give --public-url (the address players\' games reach this service at)');
  }
  await service.warmUp();
  const basePath = normalizeBasePath(config.basePath);
  const metrics = config.metrics ? createMetrics({ hashLoad: service.hashLoad }) : undefined;
  const logRequests = config.logLevel === 'info' || config.logLevel === 'debug';
  let requestId = 0;
  const app = createApp(service, {
    basePath,
    apiKey: config.apiKey,
    addressLoginLimit: config.addressLoginLimit,
    adminToken: config.adminToken,
    hostsTextures: config.publicUrl !== '',
    logError: (message, err) => log.error(message, {}, err),
    metrics: metrics?.render,
    onAnswered:
      metrics || logRequests
        ? (r) => {
            metrics?.observe(r);
            const { method, path, status, outcome } = r;
            if (logRequests) log.info('request', { reqId: ++requestId, method, path, status, ms: Math.round(r.seconds * 1e5) / 100, outcome });
          }
        : undefined,
  });
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  const server = createServer(
    {
      headersTimeout: config.headersTimeout * 1000,
      requestTimeout: config.requestTimeout * 1000,
      keepAliveTimeout: config.keepAliveTimeout * 1000,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
    (req, res) => {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      // While stopping, no answer promises a kept-alive connection the stop is about to close.
      if (stopping) res.setHeader('connection', 'close');
      app(req, res);
    },
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
  return {
    banner: listeningLine(config, port, await store.countUsers()),
    port,
    inFlight: () => inFlight.size,
    stop: async () => {
      stopping = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const closed = new Promise<void>((done) => server.close(() => done()));
      // A kept-alive connection falls idle once its request is answered; close it then.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((done) => (timer = setTimeout(() => done(true), config.shutdownTimeout * 1000)));
      const late = await Promise.race([closed.then(() => false), timedOut]);
      const cut = late ? inFlight.size : 0;
      clearInterval(sweep);
      clearTimeout(timer);
      // Also cuts connections that never finished sending their headers (no request yet).
      if (late) server.closeAllConnections();
      await store.close();
      return cut;
    },
  };
}
