// The admin API (--admin-token): managing players over HTTP for web cabinets and bots. It calls
// the same service functions as the CLI, so a rule holds in both or in neither.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_ADMIN_PAGE, MAX_TEXTURE_BYTES } from '../limits.ts';
import type { Service } from '../service/service.ts';
import type { TextureChange, User } from '../store/store.ts';
import { readBody, readJson } from '../http/body.ts';
import { HttpError, sendResult } from '../http/envelope.ts';
import { quote } from '../service/errors.ts';
import { requireObject, stringField, type JsonObject } from '../http/fields.ts';
import { queryOf, type Handler, type Params, type Routes } from '../http/router.ts';
import { createKeyCheck } from '../http/api-key.ts';
import { notePlayer, type Area } from '../http/app.ts';

export interface AdminOptions {
  /** The admin token (--admin-token). */
  token: string;
  /** Hosted textures need a public address to be answered with. */
  hostsTextures: boolean;
}

const PNG_TYPE = /^image\/png\s*$/i;

/** The player named in the path, by name or UUID. */
function who(params: Params): string {
  try {
    return decodeURIComponent(params.who!);
  } catch {
    throw new HttpError(404, 'No such player');
  }
}

/**
 * The JSON object of the body, holding no field but `known`: a typo (`offlineUUID` for
 * `offlineUuid`) must be refused, not silently ignored into a different result.
 */
async function jsonBody(req: IncomingMessage, known: string[]): Promise<JsonObject> {
  const body = requireObject(await readJson(req));
  const unknown = Object.keys(body).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new HttpError(400, `Unknown field ${quote(unknown)}: this call takes ${known.join(', ')}`);
  return body;
}

/** A time as ISO 8601 text, or null. */
const isoTime = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function optional<T>(body: JsonObject, name: string, type: 'string' | 'boolean', allowNull = false): T | undefined {
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

  const upload = (kind: 'skin' | 'cape'): Handler =>
    answer(async (req, params) => {
      const type = req.headers['content-type'];
      if (type !== undefined && !PNG_TYPE.test(type)) throw new HttpError(415, 'Content-Type must be image/png');
      if (!options.hostsTextures) throw new HttpError(409, 'Hosted textures need the server to run with --public-url');
      const model = queryOf(req).get('model');
      if (model !== null && model !== 'slim' && model !== 'classic') throw new HttpError(400, 'model must be slim or classic');
      if (kind === 'cape' && model !== null) throw new HttpError(400, 'a cape has no model');
      const bytes = await readBody(req, MAX_TEXTURE_BYTES);
      return service.setHostedTexture(who(params), { kind, bytes, ...(model === null ? {} : { isAlex: model === 'slim' }) });
    });

  return {
    '/admin/users': {
      POST: answer(async (req, _params, res) => {
        const body = await jsonBody(req, ['name', 'password', 'uuid', 'offlineUuid']);
        if (typeof body.name === 'string') notePlayer(res, body.name);
        const uuid = optional<string>(body, 'uuid', 'string');
        const offlineUuid = optional<boolean>(body, 'offlineUuid', 'boolean');
        if (uuid !== undefined && offlineUuid) throw new HttpError(400, 'Give uuid or offlineUuid, not both');
        return service.addUser({ name: stringField(body, 'name'), password: stringField(body, 'password'), uuid, offlineUuid });
      }),
      GET: async (req, res) => {
        const q = queryOf(req);
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
  };
}
