// The HTTP face of the service: its routes (the five endpoints, health, and the areas a
// capability adds), the API key, and how every failure becomes an envelope.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  HELD_REFUSAL_MS,
  MAX_DRAIN_BYTES,
  MAX_LOGGED_PLAYER_CHARS,
  MAX_PROFILES_ENTRY_BYTES,
  MAX_RELAYED_BODY_BYTES,
  NAME_PATTERN,
} from '../limits.ts';
import { DB_UNAVAILABLE, ServiceError, type Refusal } from '../service/errors.ts';
import type { Service } from '../service/service.ts';
import { then, type Answer } from '../store/store.ts';
import type { LoginClient } from '../service/throttle.ts';
import { readJson } from './body.ts';
import { HttpError, sendError, sendResult, type FailureBody } from './envelope.ts';
import { nameList, requireObject, stringFields } from './fields.ts';
import { callerOf, type AddressList, type Caller } from './client-address.ts';
import { createKeyCheck } from './api-key.ts';
import { digestToken } from '../crypto/token.ts';
import { createRouter, pathOf, type Handler, type Match, type Routes } from './router.ts';
import { readLoginRequest, yggdrasilResult } from './yggdrasil.ts';
import type { RequestRecord } from '../ops/metrics.ts';

export interface AppOptions {
  basePath: string;
  /** '' when callers need no key. */
  apiKey: string;
  /** Counts a login from an address at a time: seconds to wait, 0 when allowed (--address-login-limit; shared with the account page's login). */
  loginLimit?: LoginLimit;
  /** The relays (--relay) and the proxies whose X-Forwarded-For is the client's address (--trust-proxy). */
  relays: AddressList;
  proxies: AddressList;
  /** Route groups a capability adds (texture downloads, the admin API, the account page). */
  areas?: Area[];
  /** Where unexpected errors are reported; their details never reach the caller. */
  logError: (message: string, err: unknown) => void;
  /** Called once a request is over (answered, or its client gone), with it and its response. */
  onAnswered?: (request: AnsweredRequest, req: IncomingMessage, res: ServerResponse) => void;
  /** Throws the refusal of a request the server has no room for, once its route is known (so /join still answers in-band). */
  shed?: (req: IncomingMessage, res: ServerResponse, caller: Caller) => void;
}

/**
 * Routes under one path prefix that a capability adds. Its requests are let in by its own
 * `admit` (which throws the refusal) instead of the API key, or without one by the API key.
 */
export interface Area {
  /** Without the base path, ending in "/": `/admin/`; the path without that "/" (a page) is the area's too. */
  prefix: string;
  routes: Routes;
  admit?: (req: IncomingMessage) => void;
  /** The body of its failure answers, when its API has its own shape (the Yggdrasil API's). */
  failure?: FailureBody;
}

/** A request that is over, for the log and the metrics; nothing in it comes from a body, header or query. */
export interface AnsweredRequest extends RequestRecord {
  method: string;
  path: string;
  /** Who a login or an admin change was about: a valid name as sent, or the path's player. */
  player?: string;
  /** The client's address, as per-address rules count it (see callerOf). */
  client: string;
}

/** Seconds `address` waits for its next login (0: none); `proxied`: a client behind a trusted proxy. */
export type LoginLimit = (address: string, now: number, proxied: boolean) => number;

/**
 * What the app keeps of a request while it runs: who made it (decided as it comes in), and what
 * its log line says beyond its status: what became of it where its endpoint has outcomes (logins,
 * joins, look-ups), why, and the player it is about (noted before anything can refuse it).
 */
type Exchange = Pick<AnsweredRequest, 'outcome' | 'reason' | 'player'> & { caller: Caller };
const exchanges = new WeakMap<IncomingMessage | ServerResponse, Exchange>();

/** Who made a request the app has seen. */
export const callerFor = (req: IncomingMessage): Caller => exchanges.get(req)!.caller;

/** The launcher a clientToken names, as LoginClient.device keeps it. */
export const deviceNamed = (clientToken: string): string => `token ${digestToken(clientToken)}`;

/**
 * Who a login comes from (see LoginClient): a direct caller by its address; a relay by the
 * clientToken it forwards (kept as a digest), or else as one client for all its players. The
 * launcher, when a clientToken is sent, whoever sends it.
 */
export function loginClient(req: IncomingMessage, clientToken?: string): LoginClient {
  const { address, relay } = callerFor(req);
  const device = clientToken === undefined ? undefined : deviceNamed(clientToken);
  if (!relay) return { id: address, shared: false, address, device };
  return device === undefined ? { id: `relay ${address}`, shared: true } : { id: device, shared: false, device };
}

/**
 * Counts a login against its address's budget (--address-login-limit), unless a relay's; past it,
 * refuses it (429), held back unless a trusted proxy forwarded it (holding would take the
 * proxy's connection, which its other clients share).
 */
export function countLogin(req: IncomingMessage, limit: LoginLimit | undefined): void {
  const caller = exchanges.get(req)?.caller;
  const wait = caller && !caller.relay && limit ? limit(caller.address, Date.now(), caller.proxied) : 0;
  if (wait > 0) {
    const held = caller!.proxied ? 0 : HELD_REFUSAL_MS;
    const message = `Too many logins from this address; try again in ${wait} s`;
    throw new HttpError(429, message, { 'retry-after': String(wait) }, 'address_budget', held);
  }
}

/**
 * How long the answer to a refusal is held back: HttpError's heldMs, and a second for a login
 * the hash pool had no place for (so a flood cannot spin on the refusal), unless a trusted proxy
 * forwarded it (holding would take the proxy's connection, which its other clients share).
 */
export function heldFor(req: IncomingMessage, err: unknown): number {
  if (err instanceof HttpError) return err.heldMs;
  const pool = err instanceof ServiceError && (err.rule === 'pool_busy' || err.rule === 'pool_share');
  return pool && !exchanges.get(req)?.caller.proxied ? HELD_REFUSAL_MS : 0;
}

/** The route of a request that matched none. */
const UNMATCHED = 'unmatched';
/** The status of a request whose client left before its answer was sent (nginx's number for it). */
export const CLIENT_GONE = 499;
/** The longest path a log line carries; the rest of a longer one is cut off. */
const MAX_LOGGED_PATH = 200;

const STATUS: Record<Refusal, number> = { invalid: 400, unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, throttled: 429, busy: 503 };

/**
 * The results that answer every refusal of these routes, with status 200, in place of a failure
 * envelope. A LauncherServer's join and bulk-profiles handlers throw on `success:false` and catch
 * nothing, so one bad request from anyone on its public routes would end its process. Only a
 * refusal before the route is known (no API key, 404, 405) keeps its status.
 */
const IN_BAND: Record<string, unknown> = { '/join': false, '/profiles': [] };

/** Names the player a request is about (a login, an admin change) in its log line, cut to a bound. */
export function notePlayer(res: ServerResponse, name: string): void {
  exchanges.get(res)!.player = name.slice(0, MAX_LOGGED_PLAYER_CHARS);
}

/**
 * The name an /auth body gives (`login`, else Yggdrasil's `username`), only when it is a valid
 * player name: anything else may be a password typed into the wrong field.
 */
function loginName(body: Record<string, unknown>): string | undefined {
  const name = Object.hasOwn(body, 'login') ? body.login : Object.hasOwn(body, 'username') ? body.username : undefined;
  return typeof name === 'string' && NAME_PATTERN.test(name) ? name : undefined;
}

/**
 * A POST handler: checks the type, parses the JSON body, hands it to `run`, answers with its
 * result; `outcome` names what the result means, for the log and the metrics.
 */
function post<T>(
  run: (body: unknown, req: IncomingMessage, res: ServerResponse) => Answer<T>,
  outcome?: (result: T) => string,
  limit?: number,
): Record<string, Handler> {
  return {
    POST: (req, res) =>
      readJson(req, limit).then((body) =>
        then(run(body, req, res), (result) => {
          if (outcome) exchanges.get(req)!.outcome = outcome(result);
          sendResult(res, result);
        }),
      ),
  };
}

/** The outcome of a login, join, hasJoined or profiles call that failed: `error` for a failure of the server or its database, whatever the endpoint answers. */
function failedOutcome(route: string, err: unknown): string | undefined {
  if (route !== '/auth' && route !== '/join' && route !== '/hasJoined' && route !== '/profiles') return undefined;
  const unavailable = err instanceof ServiceError && err.rule === DB_UNAVAILABLE;
  if (unavailable || !(err instanceof ServiceError || err instanceof HttpError)) return 'error';
  if (route === '/profiles') return 'refused';
  const kind = err instanceof ServiceError ? err.kind : err.status === 429 ? 'throttled' : 'invalid';
  if (route === '/hasJoined') return kind === 'not_found' ? 'miss' : 'invalid';
  if (route === '/join') return 'invalid';
  if (kind === 'forbidden') return 'locked';
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

export function createApp(service: Service, options: AppOptions): RequestListener {
  const areas = (options.areas ?? []).map((a) => ({ ...a, prefix: options.basePath + a.prefix }));
  const route = createRouter(options.basePath, {
    '/auth': post(async (body, req, res) => {
      const b = requireObject(body);
      const player = loginName(b);
      if (player !== undefined) notePlayer(res, player);
      countLogin(req, options.loginLimit);
      // A login whose caller has left (it timed out in the queue) is not hashed for no one.
      const left = new AbortController();
      res.once('close', () => left.abort());
      // Either the contract's {"login"} or the 0.0.5 LauncherServer's forwarded Yggdrasil body.
      const { field, name, password, yggdrasil } = readLoginRequest(b);
      const from = loginClient(req, yggdrasil?.clientToken);
      const result = await service.login(name, password, { field, callerLeft: left.signal, from });
      return yggdrasil ? yggdrasilResult(result, yggdrasil.clientToken) : result;
    }, () => 'ok'),
    '/join': post(
      (body) => service.join(...stringFields(body, 'accessToken', 'userUUID', 'serverID')),
      (joined) => (joined ? 'ok' : 'bad_token'),
      MAX_RELAYED_BODY_BYTES,
    ),
    '/hasJoined': post((body) => service.hasJoined(...stringFields(body, 'username', 'serverID')), () => 'hit'),
    '/profile': post((body) => service.profile(...stringFields(body, 'userUUID'))),
    '/profiles': post((body, req) => {
      const names = nameList(body);
      return then(service.profiles(names), ({ found, ignored }) => {
        const exchange = exchanges.get(req)!;
        exchange.outcome = ignored > 0 ? 'partial' : 'ok';
        if (ignored > 0) exchange.reason = `${ignored} of ${names.length} entries not looked up: not a player name, or past the limit`;
        return found;
      });
    }, undefined, service.maxProfiles * MAX_PROFILES_ENTRY_BYTES),
    '/health': {
      GET: async (_req, res) => {
        await service.checkStore().catch((err: unknown) => {
          options.logError('health check: the database does not answer', err);
          throw new HttpError(503, 'The database does not answer');
        });
        sendResult(res, { status: 'ok' });
      },
    },
    ...Object.assign({}, ...areas.map((a) => a.routes)),
  });
  const keyCheck = options.apiKey === '' ? undefined : createKeyCheck(options.apiKey);

  /** Connections with an answer held back (HttpError's heldMs). */
  const holding = new WeakSet<object>();
  /**
   * Answers a request that failed, in the shape of its area's answers (`failure`); `held`: its
   * answer was held back (HttpError's heldMs) and is due now.
   */
  const fail = (req: IncomingMessage, res: ServerResponse, route: string, err: unknown, failure?: FailureBody, held = false): void => {
    const expected = err instanceof HttpError || err instanceof ServiceError;
    // The path only: a query string may carry a secret.
    if (!expected) options.logError(`${req.method} ${pathOf(req)}: unexpected error`, err);
    const exchange = exchanges.get(req)!;
    exchange.outcome = failedOutcome(route, err) ?? exchange.outcome;
    const rule = err instanceof HttpError ? err.refusal : err instanceof ServiceError ? err.rule : undefined;
    if (rule) exchange.reason = rule;
    if (req.socket.destroyed) return; // the client is gone: no one to answer
    const heldMs = heldFor(req, err);
    if (heldMs > 0 && !held) {
      // One held answer a connection: one that sends more meanwhile (pipelining past its refusal) is cut off.
      if (holding.has(req.socket)) return void req.socket.destroy();
      holding.add(req.socket);
      return void setTimeout(() => holding.delete(req.socket) && fail(req, res, route, err, failure, true), heldMs);
    }
    if (!req.complete) drain(req);
    if (res.headersSent) {
      res.destroy();
    } else if (Object.hasOwn(IN_BAND, route)) {
      exchange.reason ??= expected ? err.message : 'unexpected error';
      sendResult(res, IN_BAND[route]);
    } else if (err instanceof HttpError) {
      sendError(res, err.status, err.message, err.headers, failure);
    } else if (err instanceof ServiceError) {
      const headers: Record<string, string> = err.retryAfter === undefined ? {} : { 'retry-after': String(err.retryAfter) };
      sendError(res, STATUS[err.kind], err.message, headers, failure);
    } else {
      sendError(res, 500, 'Internal server error', undefined, failure);
    }
  };

  const answered = options.onAnswered;
  const { relays, proxies } = options;
  return (req, res) => {
    const path = pathOf(req);
    // Now: once the connection is gone, the socket may no longer know its peer.
    const keyed = keyCheck?.(req) ?? false;
    const exchange: Exchange = { caller: callerOf(req, relays, proxies, keyed) };
    // Under both: a capability notes a player on the response (a runtime's may not know its request).
    exchanges.set(req, exchange).set(res, exchange);
    // The route, or the 404 or 405 to answer once the caller is let in: a refused request is counted under its route.
    const matched = route(req.method ?? '', path);
    if (answered) {
      const started = performance.now();
      res.once('close', () => {
        const { outcome, reason, player, caller } = exchange;
        const status = res.writableFinished ? res.statusCode : CLIENT_GONE;
        const seconds = (performance.now() - started) / 1000;
        const label = matched instanceof HttpError ? UNMATCHED : matched.route;
        answered({ method: req.method ?? '', path: path.slice(0, MAX_LOGGED_PATH), route: label, status, seconds, outcome, reason, player, client: caller.address }, req, res);
      });
    }
    let found: Match | undefined;
    let area: (typeof areas)[number] | undefined;
    try {
      area = areas.find((a) => path.startsWith(a.prefix) || `${path}/` === a.prefix);
      if (area?.admit) area.admit(req);
      else if (keyCheck && path !== `${options.basePath}/health` && !keyed) {
        // Probes cannot send the key. Held like a flood's refusals, so guesses cost the guesser a
        // connection a second; not behind a trusted proxy, whose connection its clients share.
        const heldMs = exchange.caller.proxied ? 0 : HELD_REFUSAL_MS;
        throw new HttpError(401, 'Missing or wrong API key', { 'www-authenticate': 'Bearer' }, undefined, heldMs);
      }
      if (matched instanceof HttpError) throw matched;
      found = matched;
      options.shed?.(req, res, exchange.caller);
    } catch (err) {
      return fail(req, res, found?.route ?? UNMATCHED, err, area?.failure);
    }
    const { handler, params, route: pattern } = found;
    handler(req, res, params).catch((err: unknown) => fail(req, res, pattern, err, area?.failure));
  };
}
