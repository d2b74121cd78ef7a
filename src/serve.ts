// `serve`: opens the store, starts the HTTP server, and stops both cleanly on SIGTERM or SIGINT.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServeConfig } from './cli/options.ts';
import { createApp } from './http/app.ts';
import { normalizeBasePath } from './http/router.ts';
import { createService } from './service/service.ts';
import { MEMORY_DB } from './store/open.ts';
import type { Store } from './store/store.ts';

/** How long a stop waits for requests in flight before it exits anyway. */
const STOP_TIMEOUT_MS = 10_000;

function logError(message: string, err: unknown): void {
  process.stderr.write(`mcauth: ${message}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}

export async function serve(config: ServeConfig, store: Store): Promise<void> {
  const service = createService(store, {
    variant: config.variant,
    joinTtlSeconds: config.joinTtl,
    tokenTtlSeconds: config.tokenTtl,
    maxProfiles: config.maxProfiles,
  });
  await service.warmUp();
  const basePath = normalizeBasePath(config.basePath);
  const server = createServer(createApp(service, { basePath, logError }));

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
  process.stdout.write(`mcauth listening on http://${host}:${port}${basePath} (${users} ${users === 1 ? 'user' : 'users'} ${where})\n`);

  const stop = (): void => {
    process.stdout.write('mcauth stopping: finishing requests in flight\n');
    setTimeout(() => process.exit(0), STOP_TIMEOUT_MS).unref();
    server.close(() => void store.close().finally(() => process.exit(0)));
    server.closeIdleConnections?.();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
