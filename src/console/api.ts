// The admin page (--admins, with --account-page): GET {base}/admin/ and its JSON API under
// {base}/account/admin/. An admin signs in on the page as any player does (POST
// {base}/account/login); every call of the API carries that access token as Bearer, and is
// answered only when the token's player is one of --admins (401 without a live token, 403 for a
// player who is no admin). Each action goes through the same service functions as the admin API
// and the CLI, so every rule holds here too, and leaves a log line and a row of the audit trail.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { notePlayer, type Area } from '../http/app.ts';
import { isoTime, jsonBody, knownQuery } from '../areas/requests.ts';
import { HttpError, sendResult } from '../http/envelope.ts';
import { stringField, type JsonObject } from '../http/fields.ts';
import { pathOf, type Handler, type Params, type Routes } from '../http/router.ts';
import { INVITE_ID, type Invites } from '../invites/invites.ts';
import type { Logger } from '../ops/log.ts';
import type { Service } from '../service/service.ts';
import type { Store, User } from '../store/store.ts';
import { accountLink } from '../account/links.ts';
import { signedInPlayer } from '../account/api.ts';
import { inviteJson } from '../admin/routes.ts';
import { VERSION } from '../version.ts';
import { MAX_SEARCH_CHARS, type ConsoleData } from './data.ts';
import { renderAdminPage, type AdminPageSettings } from './page.ts';
import { throttledNames } from './throttled.ts';

/** Players one page of a search lists. */
export const SEARCH_PAGE = 20;
/** A player's audit entries the page shows. */
const AUDIT_SHOWN = 20;
const HOUR_MS = 60 * 60 * 1000;

export interface ConsoleOptions {
  /** The admins' names (--admins), any case. */
  admins: string[];
  page: AdminPageSettings;
  /** --public-url ('' unset): a reset or invite link is made of it, else the page makes it of its own address. */
  publicUrl: string;
  store: Store;
  invites: Invites;
  data: ConsoleData;
  log: Logger;
  /** When the server started (ms), for its uptime. */
  startedAt: number;
  /** The admin API's own admission (--admin-token), which keeps every path under /admin/ but the page's. */
  adminApiAdmit?: (req: IncomingMessage) => void;
}

/**
 * A change from another site is refused (403): one whose Origin names another host, or whose
 * Sec-Fetch-Site is not same-origin. The token travels in a header no other site can make a
 * browser send, so this is defence in depth against a page that has the token by other means.
 */
export function refuseCrossSite(req: IncomingMessage, publicUrl = ''): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new HttpError(403, 'Changes are taken from this page only');
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  // Host, as the browser sent it, or --public-url's (a proxy may send Host without a port the
  // browser used); X-Forwarded-Host is not trusted here.
  const own = host !== undefined && (host === req.headers.host || (publicUrl !== '' && host === new URL(publicUrl).host));
  if (!own) throw new HttpError(403, 'Changes are taken from this page only');
}

/** The search text as the index holds it: a lower-case name prefix, or a dashed UUID prefix. */
export function searchKey(by: string, q: string): string {
  if (q.length > MAX_SEARCH_CHARS) throw new HttpError(400, `Search for at most ${MAX_SEARCH_CHARS} characters`);
  if (by === 'name') {
    if (!/^[A-Za-z0-9_]*$/.test(q)) throw new HttpError(400, 'A name holds letters, digits and _ only');
    return q.toLowerCase();
  }
  if (by !== 'uuid') throw new HttpError(400, 'by must be name or uuid');
  const hex = q.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{0,32}$/.test(hex)) throw new HttpError(400, 'A UUID holds hex digits and dashes only');
  // Dashes where a UUID has them (8-4-4-4-12), as users.id keeps it.
  return [8, 12, 16, 20].reduceRight((s, at) => (s.length > at ? `${s.slice(0, at)}-${s.slice(at)}` : s), hex);
}

/** The page's area: the page itself, let in without the admin token, and every other /admin/ path left to the admin API. */
export function consoleArea(service: Service, options: ConsoleOptions): Area {
  const admins = new Set(options.admins.map((n) => n.toLowerCase()));
  const base = options.page.basePath;
  const pagePaths = new Set([`${base}/admin`, `${base}/admin/`]);
  const { data, log } = options;

  /** The admin whose live token the request carries: 401 without one, 403 for a player who is no admin. */
  const signedInAdmin = async (req: IncomingMessage): Promise<User> => {
    const { user } = await signedInPlayer(service, req);
    if (!admins.has(user.name.toLowerCase())) throw new HttpError(403, 'You are not an admin here');
    return user;
  };

  /** A handler of the API: the origin checked on a change, then the admin. */
  const asAdmin =
    (work: (req: IncomingMessage, res: ServerResponse, admin: User, params: Params) => Promise<unknown>): Handler =>
    async (req, res, params) => {
      refuseCrossSite(req, options.publicUrl);
      const admin = await signedInAdmin(req);
      sendResult(res, await work(req, res, admin, params));
    };

  /** One action in the log and the audit trail: who did what to whom, never a secret. */
  const record = async (admin: User, action: string, player: { id: string; name: string } | undefined, detail = ''): Promise<void> => {
    log.info('admin action', { admin: admin.name, action, player: player?.name, uuid: player?.id, detail: detail === '' ? undefined : detail });
    // The action is done: a trail that cannot be written now (a busy or absent database) is said in
    // the log, whose line above holds the action, and the admin still gets the answer (a reset
    // link or an invite's code is shown this once).
    try {
      await data.audit({ at: Date.now(), admin: admin.name, action, playerId: player?.id ?? '', playerName: player?.name ?? '', detail });
    } catch (err) {
      log.error('admin action: the audit trail could not be written', { err });
    }
  };

  const view = (u: User) => ({
    name: u.name,
    uuid: u.id,
    isAlex: u.isAlex,
    // Hosted textures by hash (the page fetches {base}/textures/HASH); others as their address.
    skinHash: u.skinHash,
    skinUrl: u.skinUrl,
    capeHash: u.capeHash,
    capeUrl: u.capeUrl,
    createdAt: isoTime(u.createdAt),
    lastLoginAt: isoTime(u.lastLoginAt),
    locked: u.lockedAt !== null,
    lockedAt: isoTime(u.lockedAt),
    lockReason: u.lockReason,
  });
  const withTrail = async (u: User) => ({
    ...view(u),
    audit: (await data.auditOf(u.id, AUDIT_SHOWN)).map((e) => ({ at: isoTime(e.at), admin: e.admin, action: e.action, detail: e.detail })),
  });
  const link = (kind: 'invite' | 'reset', code: string): string | null => accountLink(options.publicUrl, base, kind, code) ?? null;
  const uuidOf = (params: Params): string => params.uuid!;

  /** An action on the player in the path: `act` changes them, the answer shows them after. */
  const onPlayer = (action: string, act: (uuid: string, body: JsonObject, before: User) => Promise<{ user: User; detail?: string }>, fields: string[] = []): Handler =>
    asAdmin(async (req, res, admin, params) => {
      const body = fields.length === 0 ? {} : await jsonBody(req, fields);
      const before = await service.findUser(uuidOf(params));
      notePlayer(res, before.name);
      const { user, detail } = await act(before.id, body, before);
      await record(admin, action, before, detail);
      return withTrail(user);
    });

  const page: Handler = async (_req, res) => {
    const { html, headers } = renderAdminPage(options.page);
    res.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(html) });
    res.end(html);
  };

  const routes: Routes = {
    '/admin': { GET: page },
    '/admin/': { GET: page },
    '/account/admin/me': { GET: asAdmin(async (_req, _res, admin) => ({ name: admin.name, uuid: admin.id })) },
    '/account/admin/dashboard': {
      GET: asAdmin(async () => {
        const now = Date.now();
        const [players, locked, throttled, lastHour, lastDay, size] = await Promise.all([
          options.store.countUsers(),
          data.countLocked(),
          throttledNames(data, now),
          data.logins(now - HOUR_MS),
          data.logins(now - 24 * HOUR_MS),
          data.size(),
        ]);
        return { players, locked, throttled, lastHour, lastDay, database: data.where, databaseBytes: size, version: VERSION, uptimeSeconds: Math.floor((now - options.startedAt) / 1000) };
      }),
    },
    '/account/admin/players': {
      GET: asAdmin(async (req) => {
        const q = knownQuery(req, ['by', 'q', 'after']);
        const by = q.get('by') ?? 'name';
        const key = searchKey(by, q.get('q') ?? '');
        // The key a page gave as `next`, held to the same form as the search's own.
        const after = searchKey(by, q.get('after') ?? '');
        const found = by === 'name' ? await data.findByName(key, after, SEARCH_PAGE) : await data.findById(key, after, SEARCH_PAGE);
        const last = found.at(-1);
        return { players: found, next: found.length === SEARCH_PAGE && last ? (by === 'name' ? last.name.toLowerCase() : last.id) : null };
      }),
    },
    '/account/admin/players/:uuid': {
      GET: asAdmin(async (_req, res, _admin, params) => {
        const user = await service.findUser(uuidOf(params));
        notePlayer(res, user.name);
        return withTrail(user);
      }),
      // The admin types the player's name: a slip of the mouse removes no one.
      DELETE: asAdmin(async (req, res, admin, params) => {
        const typed = stringField(await jsonBody(req, ['name']), 'name');
        const user = await service.findUser(uuidOf(params));
        notePlayer(res, user.name);
        if (typed.toLowerCase() !== user.name.toLowerCase()) throw new HttpError(400, `Type the player's name, ${user.name}, to remove them`);
        await service.removeUser(user.id);
        await record(admin, 'remove', user);
        return { removed: user.name };
      }),
    },
    '/account/admin/players/:uuid/lock': {
      POST: onPlayer('lock', async (uuid, body) => {
        const reason = Object.hasOwn(body, 'reason') ? stringField(body, 'reason') : '';
        return { user: await service.lockUser(uuid, reason === '' ? undefined : reason), detail: reason };
      }, ['reason']),
    },
    '/account/admin/players/:uuid/unlock': { POST: onPlayer('unlock', async (uuid) => ({ user: await service.unlockUser(uuid) })) },
    '/account/admin/players/:uuid/rename': {
      POST: onPlayer('rename', async (uuid, body, before) => {
        const user = await service.renameUser(uuid, stringField(body, 'name'));
        return { user, detail: `${before.name} → ${user.name}` };
      }, ['name']),
    },
    '/account/admin/players/:uuid/skin': { DELETE: onPlayer('clear skin', async (uuid) => ({ user: await service.setTextures(uuid, { skinUrl: null }) })) },
    '/account/admin/players/:uuid/cape': { DELETE: onPlayer('clear cape', async (uuid) => ({ user: await service.setTextures(uuid, { capeUrl: null }) })) },
    '/account/admin/players/:uuid/reset-link': {
      // The code is in the answer this once (the page shows it in its body), never in the log or the trail.
      POST: asAdmin(async (_req, res, admin, params) => {
        const { user, code, expiresAt } = await service.createResetCode(uuidOf(params));
        notePlayer(res, user.name);
        await record(admin, 'reset link', user);
        return { code, link: link('reset', code), expiresAt: isoTime(expiresAt) };
      }),
    },
    '/account/admin/invites': {
      GET: asAdmin(async () => ({ invites: (await options.invites.list()).map(inviteJson) })),
      POST: asAdmin(async (req, _res, admin) => {
        const body = await jsonBody(req, ['uses', 'expiresIn']);
        const number = (name: string): number | undefined => {
          if (!Object.hasOwn(body, name)) return undefined;
          if (typeof body[name] !== 'number') throw new HttpError(400, `Field "${name}" must be a number`);
          return body[name];
        };
        const made = await options.invites.create(number('uses'), number('expiresIn'));
        await record(admin, 'create invite', undefined, `invite ${made.id}, ${made.usesLeft} uses`);
        return { ...inviteJson(made), code: made.code, link: link('invite', made.code) };
      }),
    },
    '/account/admin/invites/:id': {
      // By its id only, as the admin API: a code in the path would reach the request log.
      DELETE: asAdmin(async (_req, _res, admin, params) => {
        if (!INVITE_ID.test(params.id!)) throw new HttpError(400, "Give the invite's id, as the list shows it");
        const id = await options.invites.revoke(params.id!);
        await record(admin, 'revoke invite', undefined, `invite ${id}`);
        return { id };
      }),
    },
  };

  return {
    prefix: '/admin/',
    routes,
    // The page is public (it holds no data); any other path under /admin/ is the admin API's, as before.
    admit: (req) => {
      if (!pagePaths.has(pathOf(req))) options.adminApiAdmit?.(req);
    },
  };
}
