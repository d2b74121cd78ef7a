// The HTTP face of the service: its routes (the five endpoints, health, textures, admin), the API key, and how every failure becomes an envelope.
import { STATUS_CODES, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MAX_DRAIN_BYTES } from '../limits.ts';
import { ServiceError, type Refusal } from '../service/errors.ts';
import type { Service } from '../service/service.ts';
import { readJson } from './body.ts';
import { HttpError, sendError, sendResult } from './envelope.ts';
import { nameList, requireObject, stringField } from './fields.ts';
import { createAddressLimit } from './address-limit.ts';
import { createKeyCheck } from './api-key.ts';
import { adminRoutes } from './admin.ts';
import { createRouter, pathOf, type Handler, type Match } from './router.ts';
import { textureRoutes } from './textures.ts';
import type { RequestRecord } from '../ops/metrics.ts';

export interface AppOptions {
  basePath: string;
  /** '' when callers need no key. */
  apiKey: string;
  /** /auth calls a client address may make a minute; 0: no limit. */
  addressLoginLimit: number;
  /** '' when the admin API is off. */
  adminToken: string;
  /** Whether --public-url is set, so that hosted textures can be answered with. */
  hostsTextures: boolean;
  /** Where unexpected errors are reported; their details never reach the caller. */
  logError: (message: string, err: unknown) => void;
  /** Called once a request is over (answered, or its client gone). */
  onAnswered?: (request: AnsweredRequest) => void;
  /** The text of GET /metrics; the route is absent without it. */
  metrics?: () => Promise<string>;
}

/** A request that is over, for the log and the metrics; nothing in it comes from a body, header or query. */
export interface AnsweredRequest extends RequestRecord {
  method: string;
  path: string;
}

/** The route of a request that matched none. */
const UNMATCHED = 'unmatched';
/** The status of a request whose client left before its answer was sent (nginx's number for it). */
export const CLIENT_GONE = 499;
/** The longest path a log line carries; the rest of a longer one is cut off. */
const MAX_LOGGED_PATH = 200;

const STATUS: Record<Refusal, number> = { invalid: 400, unauthorized: 401, not_found: 404, conflict: 409, throttled: 429, busy: 503 };

/** What became of requests whose endpoint has outcomes (logins, joins, hasJoined checks). */
const outcomes = new WeakMap<ServerResponse, string>();

/**
 * A POST handler: checks the type, parses the JSON body, hands it to `run`, answers with its
 * result; `outcome` names what the result means, for the log and the metrics.
 */
function post<T>(run: (body: unknown, req: IncomingMessage, res: ServerResponse) => Promise<T>, outcome?: (result: T) => string): Record<string, Handler> {
  return {
    POST: async (req, res) => {
      const result = await run(await readJson(req), req, res);
      if (outcome) outcomes.set(res, outcome(result));
      sendResult(res, result);
    },
  };
}

/** The outcome of a login, join or hasJoined call that failed. */
function failedOutcome(route: string, err: unknown): string | undefined {
  if (route !== '/auth' && route !== '/join' && route !== '/hasJoined') return undefined;
  if (!(err instanceof ServiceError || err instanceof HttpError)) return 'error';
  const kind = err instanceof ServiceError ? err.kind : err.status === 429 ? 'throttled' : 'invalid';
  if (route === '/hasJoined') return kind === 'not_found' ? 'miss' : 'invalid';
  if (route === '/join') return 'invalid';
  return kind === 'unauthorized' ? 'bad_credentials' : kind === 'throttled' || kind === 'busy' ? kind : 'invalid';
}

/**
 * After a refusal, reads and drops the rest of the body (up to a bound) before the connection
 * may close: closing a socket with unread input makes the kernel send a reset, and the client
 * would lose the answer. A body beyond the bound is cut off, so no refused request (a 413, or a
 * 401 without the API key) can make the server read without end.
 */
function drain(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DRAIN_BYTES) req.socket.destroy();
  });
  req.resume();
}

/** GET /metrics: Prometheus' text format. */
function metricsHandler(render: () => Promise<string>): Handler {
  return async (_req, res) => {
    const text = await render();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
  };
}

export function createApp(service: Service, options: AppOptions): RequestListener {
  const perAddress = options.addressLoginLimit > 0 ? createAddressLimit(options.addressLoginLimit) : undefined;
  const route = createRouter(options.basePath, {
    '/auth': post(async (body, req, res) => {
      const b = requireObject(body);
      const wait = perAddress?.(req.socket.remoteAddress ?? '', Date.now()) ?? 0;
      if (wait > 0) throw new HttpError(429, `Too many logins from this address; try again in ${wait} s`, { 'retry-after': String(wait) });
      // A login whose caller has left (it timed out in the queue) is not hashed for no one.
      const left = new AbortController();
      res.once('close', () => left.abort());
      return service.login(stringField(b, 'login'), stringField(b, 'password'), left.signal);
    }, () => 'ok'),
    '/join': post(
      async (body) => {
        const b = requireObject(body);
        return service.join(stringField(b, 'accessToken'), stringField(b, 'userUUID'), stringField(b, 'serverID'));
      },
      (joined) => (joined ? 'ok' : 'bad_token'),
    ),
    '/hasJoined': post(async (body) => {
      const b = requireObject(body);
      return service.hasJoined(stringField(b, 'username'), stringField(b, 'serverID'));
    }, () => 'hit'),
    '/profile': post(async (body) => service.profile(stringField(requireObject(body), 'userUUID'))),
    '/profiles': post(async (body) => service.profiles(nameList(body))),
    '/health': {
      GET: async (_req, res) => {
        try {
          await service.checkStore();
        } catch (err) {
          options.logError('health check: the database does not answer', err);
          throw new HttpError(503, 'The database does not answer');
        }
        sendResult(res, { status: 'ok' });
      },
    },
    ...(options.metrics ? { '/metrics': { GET: metricsHandler(options.metrics) } } : {}),
    ...textureRoutes(service),
    ...(options.adminToken === '' ? {} : adminRoutes(service, { hostsTextures: options.hostsTextures })),
  });
  const keyCheck = options.apiKey === '' ? undefined : createKeyCheck(options.apiKey);
  const adminCheck = options.adminToken === '' ? undefined : createKeyCheck(options.adminToken, { bearerOnly: true });
  const health = `${options.basePath}/health`;
  const textures = `${options.basePath}/textures/`;
  const admin = `${options.basePath}/admin/`;

  const fail = (req: IncomingMessage, res: ServerResponse, route: string, err: unknown): void => {
    // The path only: a query string may carry a secret.
    const where = `${req.method} ${pathOf(req)}`;
    const expected = err instanceof HttpError || err instanceof ServiceError;
    if (!expected) options.logError(`${where}: unexpected error`, err);
    const outcome = failedOutcome(route, err);
    if (outcome !== undefined) outcomes.set(res, outcome);
    if (req.socket.destroyed) return; // the client is gone: no one to answer
    if (!req.complete) drain(req);
    if (res.headersSent) res.destroy();
    else if (err instanceof HttpError) {
      sendError(res, err.status, err.message, err.headers);
    } else if (err instanceof ServiceError) {
      sendError(res, STATUS[err.kind], err.message, err.retryAfter === undefined ? {} : { 'retry-after': String(err.retryAfter) });
    } else {
      sendError(res, 500, 'Internal server error');
    }
  };

  const answered = options.onAnswered;
  return (req, res) => {
    let found: Match | undefined;
    if (answered) {
      const started = performance.now();
      res.once('close', () => {
        const route = found?.route ?? UNMATCHED;
        answered({
          method: req.method ?? '',
          path: pathOf(req).slice(0, MAX_LOGGED_PATH),
          route,
          status: res.writableFinished ? res.statusCode : CLIENT_GONE,
          seconds: (performance.now() - started) / 1000,
          outcome: outcomes.get(res),
        });
      });
    }
    try {
      const path = pathOf(req);
      if (adminCheck && path.startsWith(admin)) {
        // The admin API has its own token instead of the API key.
        if (!adminCheck(req)) throw new HttpError(401, 'Missing or wrong admin token', { 'www-authenticate': 'Bearer' });
      } else if (keyCheck && path !== health && !path.startsWith(textures) && !keyCheck(req)) {
        // Probes and game clients (texture downloads) cannot send the key.
        throw new HttpError(401, 'Missing or wrong API key', { 'www-authenticate': 'Bearer' });
      }
      found = route(req);
    } catch (err) {
      return fail(req, res, UNMATCHED, err);
    }
    const { handler, params, route: pattern } = found;
    handler(req, res, params).catch((err: unknown) => fail(req, res, pattern, err));
  };
}

/**
 * Answers what Node's HTTP parser refused before any handler ran (a malformed request line,
 * headers too large, headers too slow) with the envelope too, then closes the connection.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
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
  const body = JSON.stringify({ success: false, error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
