// The admin API (--admin-token): managing players over HTTP for web cabinets and bots. It calls
// the same service functions as the CLI, so a rule holds in both or in neither.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '../service/service.ts';
import { INVITE_ID, INVITE_ID_CHARS, type Invites, type InviteView } from '../invites/invites.ts';
import type { TextureChange, User } from '../store/store.ts';
import { isoTime, jsonBody, knownQuery } from '../areas/requests.ts';
import { HttpError, sendResult } from '../http/envelope.ts';
import { stringField, type JsonObject } from '../http/fields.ts';
import { type Handler, type Params, type Routes } from '../http/router.ts';
import { createKeyCheck } from '../http/api-key.ts';
import { notePlayer, type Area } from '../http/app.ts';
import { setHostedTexture } from '../textures/hosted.ts';
import { readUpload, type UploadSettings } from '../textures/upload.ts';
import { accountLink } from '../account/links.ts';

/** Most players one page of the admin API's user list holds. */
const MAX_ADMIN_PAGE = 500;

export interface AdminOptions {
  /** The admin token (--admin-token). */
  token: string;
  /** Hosted textures need a public address to be answered with (--public-url), and --hd-textures. */
  uploads: UploadSettings;
  /** --public-url ('' when unset) and the base path: invite and reset links are made of them. */
  publicUrl: string;
  basePath: string;
  /** The invites to register (src/invites/). */
  invites: Invites;
}

/** An invite as the admin API and the admin page answer with it: its id, never its code. */
export const inviteJson = (i: InviteView) => ({ id: i.id, usesLeft: i.usesLeft, createdAt: isoTime(i.createdAt), expiresAt: isoTime(i.expiresAt) });

/** The player named in the path, by name or UUID. */
function who(params: Params): string {
  try {
    return decodeURIComponent(params.who!);
  } catch {
    throw new HttpError(404, 'No such player');
  }
}

function optional<T>(body: JsonObject, name: string, type: 'string' | 'boolean' | 'number', allowNull = false): T | undefined {
  if (!Object.hasOwn(body, name)) return undefined;
  const value = body[name];
  if (typeof value === type || (allowNull && value === null)) return value as T;
  throw new HttpError(400, `Field "${name}" must be a ${type}${allowNull ? ' or null' : ''}`);
}

/** The admin API as an area of the app: `/admin/`, let in by the admin token alone (as Bearer, never in the URL; the API key does not open it). */
export function adminArea(service: Service, options: AdminOptions): Area {
  const check = createKeyCheck(options.token, { bearerOnly: true });
  return {
    prefix: '/admin/',
    routes: adminRoutes(service, options),
    admit: (req) => {
      if (!check(req)) throw new HttpError(401, 'Missing or wrong admin token', { 'www-authenticate': 'Bearer' });
    },
  };
}

function adminRoutes(service: Service, options: AdminOptions): Routes {
  const view = (u: User) => ({
    name: u.name,
    uuid: u.id,
    isAlex: u.isAlex,
    skinUrl: service.textureUrl(u.skinUrl, u.skinHash) ?? null,
    capeUrl: service.textureUrl(u.capeUrl, u.capeHash) ?? null,
    createdAt: isoTime(u.createdAt),
    lastLoginAt: isoTime(u.lastLoginAt),
    locked: u.lockedAt !== null,
    lockedAt: isoTime(u.lockedAt),
    lockReason: u.lockReason,
  });
  /** A handler that answers with the player the work returns. */
  const answer =
    (work: (req: IncomingMessage, params: Params, res: ServerResponse) => Promise<User>): Handler =>
    async (req, res, params) => {
      // Every admin call names its player in the log: as the path names it, then as registered.
      if (params.who !== undefined) notePlayer(res, params.who);
      const user = await work(req, params, res);
      notePlayer(res, user.name);
      sendResult(res, view(user));
    };

  const upload = (kind: 'skin' | 'cape'): Handler => answer(async (req, params) => setHostedTexture(service, who(params), await readUpload(req, kind, options.uploads)));
  const link = (kind: 'invite' | 'reset', code: string): string | null => accountLink(options.publicUrl, options.basePath, kind, code) ?? null;

  return {
    '/admin/users': {
      POST: answer(async (req, _params, res) => {
        const body = await jsonBody(req, ['name', 'password', 'hash', 'uuid', 'offlineUuid']);
        if (typeof body.name === 'string') notePlayer(res, body.name);
        const uuid = optional<string>(body, 'uuid', 'string');
        const offlineUuid = optional<boolean>(body, 'offlineUuid', 'boolean');
        if (uuid !== undefined && offlineUuid) throw new HttpError(400, 'Give uuid or offlineUuid, not both');
        // A hash written by another system (see src/import/) instead of a password: kept until the first login.
        const hash = optional<string>(body, 'hash', 'string');
        if (hash !== undefined && Object.hasOwn(body, 'password')) throw new HttpError(400, 'Give password or hash, not both');
        const name = stringField(body, 'name');
        return service.addUser(hash === undefined ? { name, password: stringField(body, 'password'), uuid, offlineUuid } : { name, hash, uuid, offlineUuid });
      }),
      GET: async (req, res) => {
        const q = knownQuery(req, ['limit', 'after']);
        const limitText = q.get('limit') ?? '100';
        const limit = Number(limitText);
        if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_ADMIN_PAGE) {
          throw new HttpError(400, `limit must be a whole number from 1 to ${MAX_ADMIN_PAGE}`);
        }
        const users = await service.listUsers(q.get('after') ?? '', limit);
        sendResult(res, { users: users.map(view), next: users.length === limit ? users.at(-1)!.name : null });
      },
    },
    '/admin/users/:who': {
      GET: answer(async (_req, params) => service.findUser(who(params))),
      DELETE: answer(async (_req, params) => service.removeUser(who(params))),
      PATCH: answer(async (req, params) => {
        const body = await jsonBody(req, ['skinUrl', 'capeUrl', 'isAlex']);
        const change: TextureChange = {};
        const skinUrl = optional<string | null>(body, 'skinUrl', 'string', true);
        const capeUrl = optional<string | null>(body, 'capeUrl', 'string', true);
        const isAlex = optional<boolean>(body, 'isAlex', 'boolean');
        if (skinUrl !== undefined) change.skinUrl = skinUrl;
        if (capeUrl !== undefined) change.capeUrl = capeUrl;
        if (isAlex !== undefined) change.isAlex = isAlex;
        if (Object.keys(change).length === 0) throw new HttpError(400, 'Nothing to change: give skinUrl, capeUrl or isAlex');
        return service.setTextures(who(params), change);
      }),
    },
    '/admin/users/:who/password': {
      POST: answer(async (req, params) => service.changePassword(who(params), stringField(await jsonBody(req, ['password']), 'password'))),
    },
    '/admin/users/:who/revoke': {
      POST: answer(async (_req, params) => service.revokeSessions(who(params))),
    },
    '/admin/users/:who/lock': {
      // `{}` locks without a reason.
      POST: answer(async (req, params) => service.lockUser(who(params), optional<string>(await jsonBody(req, ['reason']), 'reason', 'string'))),
    },
    '/admin/users/:who/unlock': {
      POST: answer(async (_req, params) => service.unlockUser(who(params))),
    },
    '/admin/users/:who/rename': {
      POST: answer(async (req, params) => service.renameUser(who(params), stringField(await jsonBody(req, ['name']), 'name'))),
    },
    '/admin/users/:who/skin': {
      PUT: upload('skin'),
      DELETE: answer(async (_req, params) => service.setTextures(who(params), { skinUrl: null })),
    },
    '/admin/users/:who/cape': {
      PUT: upload('cape'),
      DELETE: answer(async (_req, params) => service.setTextures(who(params), { capeUrl: null })),
    },
    '/admin/users/:who/reset-link': {
      // A new link voids the player's earlier one; the code is shown this once.
      POST: async (_req, res, params) => {
        notePlayer(res, params.who!);
        const { user, code, expiresAt } = await service.createResetCode(who(params));
        notePlayer(res, user.name);
        sendResult(res, { name: user.name, code, link: link('reset', code), expiresAt: isoTime(expiresAt) });
      },
    },
    '/admin/invites': {
      POST: async (req, res) => {
        const body = await jsonBody(req, ['uses', 'expiresIn']);
        const made = await options.invites.create(optional<number>(body, 'uses', 'number'), optional<number>(body, 'expiresIn', 'number'));
        sendResult(res, { ...inviteJson(made), code: made.code, link: link('invite', made.code) });
      },
      GET: async (_req, res) => sendResult(res, { invites: (await options.invites.list()).map(inviteJson) }),
    },
    '/admin/invites/:id': {
      // By its id only: a code in the path would reach the request log.
      DELETE: async (_req, res, params) => {
        if (!INVITE_ID.test(params.id!)) throw new HttpError(400, `Give the invite's id (${INVITE_ID_CHARS} hex digits, as the list shows it), not its code`);
        sendResult(res, { id: await options.invites.revoke(params.id!) });
      },
    },
  };
}
