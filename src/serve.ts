// `serve`: the HTTP server over an open store, started and stopped as one unit.
import { statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { envName, SERVE_OPTIONS, toServiceOptions, type ConfigFile, type ServeConfig } from './cli/options.ts';
import { SYSTEMD_SOCKET_BACKLOG } from './cli/systemd-socket.ts';
import type { Duplex } from 'node:stream';
import { createApp, type Area, type LoginLimit } from './http/app.ts';
import { addressList, type AddressList } from './http/client-address.ts';
import { createConnections } from './connections.ts';
import { HttpError, sendError } from './http/envelope.ts';
import { adminArea } from './admin/routes.ts';
import { createInvites } from './invites/invites.ts';
import { loadSigningKey, type SigningKey } from './yggdrasil/keys.ts';
import { yggdrasilArea } from './yggdrasil/routes.ts';
import { accountArea } from './account/api.ts';
import { consoleArea } from './console/api.ts';
import { openConsoleData, type ConsoleData } from './console/data.ts';
import { countLogins } from './console/logins.ts';
import { textureArea } from './textures/downloads.ts';
import { normalizeBasePath } from './http/router.ts';
import { createService } from './service/service.ts';
import { MEMORY_DB } from './memory/store.ts';
import type { Store } from './store/store.ts';
import { HELD_REFUSAL_MS, MAX_DRAIN_BYTES } from './limits.ts';
import type { Logger } from './ops/log.ts';
import { createMetrics, metricsArea } from './ops/metrics.ts';
import { createWindowLimit, type WindowLimits } from './ops/window-limit.ts';
import { isPostgresUrl, maskDbUrl } from './postgres/url.ts';
import type { Service } from './service/service.ts';

// node:http is taken as a built-in, not imported: an import's namespace reads every export, and
// one of them is a lazy getter that loads Node's fetch (undici), 40 to 60 ms of every start.
const { createServer, STATUS_CODES } = process.getBuiltinModule('node:http');

/** How long a connection over its address's cap may take to send a request (one with the API key is let in); then it is closed, costing no slot. */
const OVER_CAP_GRACE_MS = 1000;

/**
 * How long a connection closed after an error answer is still read (and the input dropped) for
 * the client to close its side; then it is destroyed, so a client that never closes cannot hold
 * it half-open (FIN-WAIT-2).
 */
const CLOSE_LINGER_MS = 2000;

/** How often Node checks the headers and request timeouts (its default, 30 s, would let a slow client stay that long). */
const CONNECTIONS_CHECK_INTERVAL_MS = 1000;

/** The window --address-login-limit counts in. */
const ADDRESS_LOGIN_WINDOW_MS = 60 * 1000;

export interface RunningServer {
  /** The one line that says where it listens and what it serves. */
  banner: string;
  /** Where it listens (the socket's own address when systemd passed it; '' and 0 in a worker its primary deals to). */
  host: string;
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

/** In a worker on systemd's socket: the connections its primary deals it (src/cli/deal.ts). */
export interface Dealt {
  /** From now on `take` gets each connection the primary deals this worker. */
  start: (take: (socket: Socket) => void) => void;
  /**
   * Asks the primary to deal no more; resolves once it will not (or has gone) and every
   * connection it dealt has closed: what a listener's close does for its own connections.
   */
  end: () => Promise<void>;
}

/** Where a server listens: an address and port, and the fd when the socket came from systemd. */
export interface ListenAddress {
  host: string;
  port: number;
  systemdFd?: number;
}

/** The line that says where the server listens and what it serves (for all its workers, if several). */
export function listeningLine(config: ServeConfig, at: ListenAddress, users: number, workers = 1): string {
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  const where = config.db === MEMORY_DB ? 'in memory' : `in ${maskDbUrl(config.db)}`;
  const cluster = workers > 1 ? `, ${workers} workers` : '';
  const socket = at.systemdFd === undefined ? '' : `, on the socket systemd passed as fd ${at.systemdFd}`;
  return `mcauth listening on http://${host}:${at.port}${normalizeBasePath(config.basePath)} (${users} ${users === 1 ? 'user' : 'users'} ${where}${cluster}${socket})`;
}

/** Listens on the socket systemd passed as `fd` (in a worker: through node:cluster, on its primary's), else on --host and --port. */
function listen(server: NetServer, config: ServeConfig, fd: number | undefined): Promise<void> {
  const what = fd === undefined ? `${config.host}:${config.port}` : `the socket systemd passed as fd ${fd}`;
  return new Promise<void>((listening, fail) => {
    const refuse = (err: NodeJS.ErrnoException): void =>
      fail(new Error(`cannot listen on ${what}: ${err.code === 'EADDRINUSE' ? 'the address is in use' : err.message}`));
    server.once('error', refuse);
    try {
      if (fd === undefined) server.listen(config.port, config.host, () => listening());
      else server.listen({ fd }, SYSTEMD_SOCKET_BACKLOG, () => listening());
    } catch (err) {
      // A runtime that cannot take an inherited fd (or fd 3 that is no listening socket) may throw here.
      refuse(err as NodeJS.ErrnoException);
    }
  });
}

/**
 * How long past --keep-alive-timeout (which each answer's `Keep-Alive: timeout=` tells the client)
 * an idle connection is kept before the server closes it: a client drops it first (undici a
 * second or two early), even one whose event loop runs late on a busy host. Closed by the server
 * first, it could cross a request the client has just sent on it, which the client then sees
 * fail ("other side closed"; a LauncherServer crashes on that). Node 24.6 and later honour it.
 */
const KEEP_ALIVE_GRACE_MS = 3000;

/** What the start-up warnings are decided from besides the settings. */
export interface StartFacts {
  /** The port listened on (the one --port 0 chose). */
  port: number;
  /** Hosted skins and capes in the database. */
  hostedTextures: number;
  /** The --config file, when there is one. */
  configFile?: ConfigFile;
}

/** 127.0.0.0/8, ::1 (also written out, or as IPv4-mapped 127.x) and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(h);
}

/** `path` when it exists and group or others have any permission on it, with its mode. */
function openToOthers(path: string): string | undefined {
  // Windows has no such bits: its mode says nothing about who may read.
  if (process.platform === 'win32') return undefined;
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return undefined;
  }
  return (mode & 0o077) === 0 ? undefined : `${path} (mode ${(mode & 0o777).toString(8).padStart(4, '0')})`;
}

/**
 * What an admin should fix, though the server can run: one message each. They are decided at
 * start only (a file's mode changed later is not seen).
 */
export function startupWarnings(config: ServeConfig, facts: StartFacts): string[] {
  const warnings: string[] = [];
  if (config.publicUrl === '' && facts.hostedTextures > 0) {
    // Refusing to start would make a service manager restart it in a loop; answers leave them out.
    warnings.push(
      `the database holds hosted skins or capes, but --public-url is not set: answers leave them out, as if those players had none; set --public-url (the address players' games reach this service at)`,
    );
  }
  if (config.registration !== 'off' && !config.accountPage) {
    warnings.push(`--registration ${config.registration} has no effect without --account-page: no one can sign up, as the page and its API are off; set --account-page too`);
  }
  if (config.admins !== '' && !config.accountPage) {
    warnings.push(`--admins has no effect without --account-page: the admin page signs admins in through the account page's API; set --account-page too`);
  }
  if (config.db !== MEMORY_DB && !isPostgresUrl(config.db)) {
    const db = config.db;
    const open = [db, `${db}-wal`, `${db}-shm`].map(openToOthers).filter((f) => f !== undefined);
    if (open.length > 0) {
      warnings.push(`the database holds password hashes, and group or others have access to it: ${open.join(', ')}; run chmod 600 on ${open.length === 1 ? 'it' : 'them'}`);
    }
  }
  const file = facts.configFile;
  // A config file without secrets is meant to be readable (deploy/mcauth.service's DynamicUser reads a root-owned one).
  const secrets = file ? SERVE_OPTIONS.filter((o) => o.secret && typeof file.values[o.key] === 'string' && file.values[o.key] !== '') : [];
  const configOpen = file && secrets.length > 0 ? openToOthers(file.path) : undefined;
  if (configOpen !== undefined) {
    const keys = secrets.map((o) => o.key).join(' and ');
    const vars = secrets.map((o) => envName(o.flag)).join(', ');
    warnings.push(`the config file holds ${keys}, and group or others have access to it: ${configOpen}; run chmod 600 ${file!.path}, or set ${vars} in the environment instead`);
  }
  if (config.shutdownTimeout * 1000 < config.keepAliveTimeout * 1000 + KEEP_ALIVE_GRACE_MS) {
    // At the end of a stop the connections still open are cut, idle kept-alive ones too: one may cross a request just sent on it.
    warnings.push(
      `--shutdown-timeout ${config.shutdownTimeout} is shorter than --keep-alive-timeout ${config.keepAliveTimeout} and the ${KEEP_ALIVE_GRACE_MS / 1000} s that follow it: a stop may cut an idle kept-alive connection just as its client sends on it, and a LauncherServer crashes on that; give --shutdown-timeout ${config.keepAliveTimeout + KEEP_ALIVE_GRACE_MS / 1000} or more`,
    );
  }
  if (config.apiKey === '' && !isLoopbackHost(config.host)) {
    const at = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${facts.port}`;
    const wildcard = config.host === '0.0.0.0' || config.host === '::';
    const reach = wildcard ? `port ${facts.port} on any address of this host` : at;
    warnings.push(`--host ${config.host} is not loopback and there is no --api-key: anyone who can reach ${reach} can log players in, record joins, and look up every player; set --api-key (or MCAUTH_API_KEY), or listen on 127.0.0.1`);
  }
  return warnings;
}

/** Options of startServer besides the settings. */
export interface StartOptions {
  /** The --config file, for the warnings. */
  configFile?: ConfigFile;
  /** Log the start-up warnings (false in a worker: the primary logs them once). */
  warnings?: boolean;
  /** The socket systemd passed, to listen on instead of --host and --port. */
  systemdFd?: number;
  /** In a worker on systemd's socket (`systemdFd`): the connections its primary deals it, instead of listening. */
  dealt?: Dealt;
  /**
   * Limits counted where every process sees them: the store's database, on PostgreSQL (every
   * node); the primary, for --workers on SQLite (src/cli/primary-limits.ts). Else this process
   * counts its own.
   */
  limits?: WindowLimits;
}

/**
 * Once its answer is written, a connection that is to close is still read (the input dropped,
 * up to a bound) until the client closes its side or CLOSE_LINGER_MS pass, then destroyed. An
 * end alone leaves it half-open (FIN-WAIT-2) for as long as the client keeps its side open,
 * holding a slot; a destroy at once with unread input makes the kernel send a reset, which can
 * lose the answer.
 */
function closeAfterAnswer(socket: Duplex): void {
  socket.once('finish', () => {
    let dropped = 0;
    socket.on('data', (chunk: Buffer) => {
      if ((dropped += chunk.length) > MAX_DRAIN_BYTES) socket.destroy();
    });
    socket.once('end', () => socket.destroy());
    socket.resume();
    setTimeout(() => socket.destroy(), CLOSE_LINGER_MS).unref();
  });
}

/** Writes a failure envelope straight to a socket no request object holds, and closes it. */
function endWithError(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ success: false, error: message });
  closeAfterAnswer(socket);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `x-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * Answers what Node's HTTP parser refused before any handler ran (a malformed request line,
 * headers too large, headers too slow) with the envelope too, then closes the connection.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request took too long']
        : [400, 'Malformed HTTP request'];
  endWithError(socket, status, message);
}

/** Relays and trusted proxies, by a connection's peer address: their connections carry many clients. */
export function trustedPeer(config: Pick<ServeConfig, 'relay' | 'trustProxy'>): (peer: string) => boolean {
  const [relays, proxies] = [addressList(config.relay), addressList(config.trustProxy)];
  return (peer) => relays(peer) || proxies(peer);
}

/** The login budget: `direct` logins a minute of a direct address, `proxied` of a client behind a trusted proxy. */
function perCallerLimit(direct: number, proxied: number): LoginLimit {
  const { take } = createWindowLimit(direct, ADDRESS_LOGIN_WINDOW_MS);
  const own = (address: string, now: number): number => take(address, now);
  if (direct === proxied) return own;
  const behindProxy = createWindowLimit(proxied, ADDRESS_LOGIN_WINDOW_MS).take;
  return (address, now, viaProxy) => (viaProxy ? behindProxy : own)(address, now);
}

/** The route groups the settings switch on, beside the five endpoints and health. */
function areas(
  service: Service,
  store: Store,
  config: ServeConfig,
  { render, loginLimit, limits, key, admins }: { render?: () => Promise<string>; loginLimit?: LoginLimit; limits?: WindowLimits; key?: SigningKey; admins?: { data: ConsoleData; log: Logger } },
): Area[] {
  const uploads = { hostsTextures: config.publicUrl !== '', hdTextures: config.hdTextures };
  const basePath = normalizeBasePath(config.basePath);
  const invites = createInvites(store);
  const admin = config.adminToken === '' ? undefined : adminArea(service, { token: config.adminToken, uploads, publicUrl: config.publicUrl, basePath, invites });
  // The admin page shares /admin/ with the admin API: first in the list, it lets its page in
  // without the admin token and leaves every other path there to the admin API's own check.
  const page = admins
    ? consoleArea(service, {
        admins: config.admins.split(','),
        page: { basePath, serverName: config.serverName },
        publicUrl: config.publicUrl,
        store,
        invites,
        ...admins,
        startedAt: Date.now(),
        adminApiAdmit: admin?.admit,
      })
    : undefined;
  return [
    textureArea(service),
    ...(render ? [metricsArea(render)] : []),
    ...(page ? [page] : []),
    ...(admin ? [admin] : []),
    ...(config.accountPage
      ? [
          accountArea(service, {
            settings: { registration: config.registration, minPasswordLength: config.minPasswordLength, basePath, serverName: config.serverName },
            offlineUuids: config.registrationUuid === 'offline',
            // Counted in this process, or, with --workers, where they all count (see StartOptions.limits).
            registrationsPerAddress: config.registrationsPerAddress,
            registrationsPerHour: config.registrationsPerHour,
            limits,
            loginLimit,
            uploads,
            admins: page ? config.admins.split(',') : [],
          }),
        ]
      : []),
    ...(key
      ? [
          yggdrasilArea(service, {
            key,
            serverName: config.serverName,
            publicUrl: config.publicUrl,
            basePath,
            accountPage: config.accountPage,
            registration: config.registration !== 'off',
            loginLimit,
            limits,
            uploads,
          }),
        ]
      : []),
  ];
}

export async function startServer(config: ServeConfig, store: Store, log: Logger, { configFile, warnings = true, systemdFd, dealt, limits }: StartOptions = {}): Promise<RunningServer> {
  const service = createService(store, toServiceOptions(config));
  const basePath = normalizeBasePath(config.basePath);
  const metrics = config.metrics ? createMetrics({ hashLoad: service.hashLoad }) : undefined;
  const logRequests = config.logLevel === 'info' || config.logLevel === 'debug';
  // A limit counted in memory: node:cluster deals connections to the workers in turn, so each
  // holding its share keeps the total the one the owner set. On systemd's socket the primary
  // deals every connection of a direct address to one worker (src/cli/deal.ts), which holds a
  // limit of direct addresses whole (a share would refuse what the owner allowed); relays' and
  // proxies' connections are dealt in turn, and their clients still counted in shares.
  const shareOf = (limit: number): number => Math.ceil(limit / config.workers);
  const directShareOf = (limit: number): number => (dealt ? limit : shareOf(limit));
  // One count for /auth and the account page's login.
  const loginLimit = config.addressLoginLimit > 0 ? perCallerLimit(directShareOf(config.addressLoginLimit), shareOf(config.addressLoginLimit)) : undefined;
  // Made (or read) before the server listens: every answer of the API is signed with it.
  const key = config.yggdrasil ? await loadSigningKey(service, config.yggdrasilKey) : undefined;
  // On every answer, the site's root above all: a player may give a launcher the plain site address.
  const apiLocation = config.yggdrasil ? `${basePath}/yggdrasil/` : undefined;
  let requestId = 0;
  const relays: AddressList = addressList(config.relay);
  const proxies: AddressList = addressList(config.trustProxy);
  // Every connection is accepted and counted until it closes; one refused is refused by an answer
  // on its request (503; in-band on /join), as a LauncherServer crashes on a connection closed
  // without a word (Node's own server.maxConnections would do that).
  const connections = createConnections({
    max: config.maxConnections,
    perAddress: directShareOf(config.maxConnectionsPerAddress),
    trusted: trustedPeer(config),
    graceMs: OVER_CAP_GRACE_MS,
  });
  // The admin page (--admins, on the account page) and the login counts of its dashboard.
  const consoleData = config.accountPage && config.admins !== '' ? await openConsoleData(config.db, store, process.env) : undefined;
  const logins = consoleData && countLogins(consoleData, (err) => log.error('admin page: login counts not written', {}, err));
  const inFlight = new Set<ServerResponse>();
  const app = createApp(service, {
    basePath,
    apiKey: config.apiKey,
    loginLimit,
    relays,
    proxies,
    areas: areas(service, store, config, { render: metrics?.render, loginLimit, limits, key, admins: consoleData && { data: consoleData, log } }),
    logError: (message, err) => log.error(message, {}, err),
    onAnswered: (r, req, res) => {
      inFlight.delete(res);
      connections.ended(req.socket);
      metrics?.observe(r);
      logins?.observe(r);
      const { method, path, status, outcome, player, client, reason } = r;
      if (logRequests) log.info('request', { reqId: ++requestId, method, path, status, ms: Math.round(r.seconds * 1e5) / 100, outcome, reason, player, client });
    },
    shed: (req, res, caller) => {
      const refusal = connections.admit(req.socket, caller.relay);
      if (refusal === undefined) return;
      res.setHeader('connection', 'close');
      if (refusal === 'address_connections') {
        throw new HttpError(503, 'Too many connections from this address; try again in a moment', { 'retry-after': '1' }, refusal, HELD_REFUSAL_MS);
      }
      throw new HttpError(503, 'Too many connections; try again in a moment', { 'retry-after': '1' }, refusal);
    },
  });
  let stopping = false;
  const server = createServer(
    {
      headersTimeout: config.headersTimeout * 1000,
      requestTimeout: config.requestTimeout * 1000,
      keepAliveTimeout: config.keepAliveTimeout * 1000,
      keepAliveTimeoutBuffer: KEEP_ALIVE_GRACE_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
    (req, res) => {
      // Until the app's onAnswered above.
      inFlight.add(res);
      connections.began(req.socket);
      // While stopping, no answer promises a kept-alive connection the stop is about to close.
      if (stopping) res.setHeader('connection', 'close');
      if (apiLocation) res.setHeader('x-authlib-injector-api-location', apiLocation);
      app(req, res);
    },
  );
  server.on('connection', (socket: Socket) => connections.accept(socket));
  server.on('clientError', answerClientError);
  // Node's own answers to these carry no envelope: CONNECT is closed without a word, an Expect
  // other than 100-continue gets an empty 417.
  server.on('connect', (_req, socket: Socket) => endWithError(socket, 405, 'Method not allowed: CONNECT'));
  server.on('checkExpectation', (req, res) => {
    req.resume();
    sendError(res, 417, 'Expect is not supported, other than 100-continue', { connection: 'close' });
  });

  let at: ListenAddress | undefined;
  if (dealt) {
    // Node checks the headers and request timeouts once a server listens; dealt connections
    // come through no listener of this one, so it is told it listens.
    server.emit('listening');
    dealt.start((socket) => server.emit('connection', socket));
  } else {
    await listen(server, config, systemdFd);
    const { address, port } = server.address() as AddressInfo;
    at = { host: address, port, systemdFd };
    // The warnings judge the address really listened on (systemd's socket's, not --host).
    if (warnings) for (const w of startupWarnings({ ...config, host: address }, { port, hostedTextures: await store.countTextures(), configFile })) log.warn(w);
  }
  return {
    banner: at ? listeningLine(config, at, await store.countUsers()) : `mcauth listening through its primary, which deals it connections from the socket systemd passed as fd ${systemdFd}`,
    host: at?.host ?? '',
    port: at?.port ?? 0,
    inFlight: () => inFlight.size,
    stop: async () => {
      stopping = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      // The keep-alive race: closing a kept-alive connection that is idle can cross a request the
      // client has just sent on it, which it then sees fail ("other side closed"; a LauncherServer
      // crashes on that). No moment is safe for the server to close one, so it leaves them to the
      // client: each answer's `Keep-Alive: timeout=N` told the client to drop the connection after
      // N idle seconds (undici does, a little before), and a request that comes first is answered
      // with `Connection: close`. Node's own keep-alive timer closes one a client forgot, 3 s
      // after N (KEEP_ALIVE_GRACE_MS); --shutdown-timeout bounds it all. http.Server's close()
      // would close idle connections at once, so the listener is closed as a net.Server's.
      const closed = dealt ? dealt.end() : new Promise<void>((done) => NetServer.prototype.close.call(server, () => done()));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((done) => (timer = setTimeout(() => done(true), config.shutdownTimeout * 1000)));
      const late = await Promise.race([closed.then(() => false), timedOut]);
      const cut = late ? inFlight.size : 0;
      clearTimeout(timer);
      // Also cuts connections that never finished sending their headers (no request yet).
      if (late) server.closeAllConnections();
      await logins?.stop();
      await consoleData?.close();
      await store.close();
      return cut;
    },
  };
}
