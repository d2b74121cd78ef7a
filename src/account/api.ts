// The account page and its JSON API (--account-page): players sign up, sign in, change their
// password, skin and cape, sign out everywhere, and use a reset link, on their own. Everything
// goes through the same service functions as /auth, the CLI and the admin API, so every rule
// holds here too. Players' browsers cannot hold the API key: this area needs none. A signed-in
// call carries the player's access token as `Authorization: Bearer TOKEN` (never a cookie, so
// no other site can make a browser send it: no CSRF). The one cookie, set by a sign-in and sent
// with the next only, marks the browser as one the player signed in with (device-cookie.ts).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerFor, countLogin, deviceNamed, loginClient, notePlayer, type Area, type LoginLimit } from '../http/app.ts';
import { isoTime, jsonBody } from '../areas/requests.ts';
import { HttpError, sendResult } from '../http/envelope.ts';
import { stringField } from '../http/fields.ts';
import type { Handler } from '../http/router.ts';
import { NAME_PATTERN } from '../limits.ts';
import { createWindowLimit, type WindowLimits } from '../ops/window-limit.ts';
import { ServiceError } from '../service/errors.ts';
import type { Service } from '../service/service.ts';
import type { User } from '../store/store.ts';
import { setHostedTexture } from '../textures/hosted.ts';
import { readUpload, type UploadSettings } from '../textures/upload.ts';
import { deviceCookie, sentDevice } from './device-cookie.ts';
import { renderPage, type AccountSettings } from './page.ts';

/** The window both registration limits count in. */
const REGISTRATION_WINDOW_MS = 60 * 60 * 1000;

export interface AccountOptions {
  /** What the page is built for: who may sign up, the password policy, the base path. */
  settings: AccountSettings;
  /** New players get the UUID an offline-mode server derives from their name (--registration-uuid offline). */
  offlineUuids: boolean;
  /** Registrations a client address may make an hour, and all addresses together. */
  registrationsPerAddress: number;
  registrationsPerHour: number;
  /** Where the registration limits count: in this process (the default), or in a database all nodes share. */
  limits?: WindowLimits;
  /** The --address-login-limit count, shared with /auth so that the two together get the limit once. */
  loginLimit?: LoginLimit;
  /** Hosted textures have a public address (--public-url; uploads are refused without one), and --hd-textures. */
  uploads: UploadSettings;
  /** The admins of the admin page (--admins, when it is on): their own view says `admin: true`, and the page links to it. */
  admins?: string[];
}

/**
 * Refusals given back to the registration limits: a name or password of the wrong form (400)
 * makes no player, and a full hash pool (503) is not the caller's doing. A taken name or a wrong
 * invite code counts: each is a probe of the names or the codes.
 */
const freeRefusal = (err: unknown): boolean => err instanceof ServiceError && (err.kind === 'invalid' || err.kind === 'busy');

/** The player's own view of themselves: the admin view without the lock (a locked player cannot sign in); `admin` for an admin of the admin page. */
function me(service: Service, u: User, admins: Set<string>) {
  return {
    ...(admins.has(u.name.toLowerCase()) ? { admin: true } : {}),
    name: u.name,
    uuid: u.id,
    isAlex: u.isAlex,
    skinUrl: service.textureUrl(u.skinUrl, u.skinHash) ?? null,
    capeUrl: service.textureUrl(u.capeUrl, u.capeHash) ?? null,
    createdAt: isoTime(u.createdAt),
    lastLoginAt: isoTime(u.lastLoginAt),
  };
}

/** The player whose live access token the request carries (as Bearer), and the token; 401 otherwise. */
export async function signedInPlayer(service: Service, req: IncomingMessage): Promise<{ user: User; token: string }> {
  const token = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
  const user = token === undefined ? undefined : await service.userByToken(token);
  if (!user) throw new HttpError(401, 'Sign in again', { 'www-authenticate': 'Bearer' });
  return { user, token: token! };
}

/** Names the player in the request's log line, as /auth does: only a valid name (not a password typed in the wrong field). */
function noteName(res: ServerResponse, name: string): void {
  if (NAME_PATTERN.test(name)) notePlayer(res, name);
}

/** The page (`GET {base}/account`) and the API (`{base}/account/...`), open to every caller. */
export function accountArea(service: Service, options: AccountOptions): Area {
  // In memory, per process, unless the server shares them (src/serve.ts: with --workers the
  // primary counts for all the workers; on PostgreSQL the database counts for every node).
  const limits: WindowLimits = options.limits ?? ((_name, limit, windowMs) => createWindowLimit(limit, windowMs));
  const admins = new Set((options.admins ?? []).map((n) => n.toLowerCase()));
  const perAddress = limits('registrations by address', options.registrationsPerAddress, REGISTRATION_WINDOW_MS);
  const inAll = limits('registrations in all', options.registrationsPerHour, REGISTRATION_WINDOW_MS);

  /**
   * Counts a registration from `address` (not a relay's against its address: '' for one), or
   * refuses it (429) when a limit is reached. Past the hourly limit of all addresses, open
   * sign-up takes an invite code (`code`, '' for none) instead of closing for everyone: such a
   * sign-up is bounded by its invite, not counted in all. Says whether it is one (its code must
   * then be used).
   */
  const countRegistration = async (address: string, code: string): Promise<boolean> => {
    const now = Date.now();
    const wait = address === '' ? 0 : await perAddress.take(address, now);
    if (wait > 0) throw new HttpError(429, `Too many registrations from this address; try again in ${wait} s`, { 'retry-after': String(wait) });
    const waitAll = await inAll.take('', now);
    if (waitAll === 0) return false;
    if (options.settings.registration === 'open' && code !== '') return true;
    await perAddress.giveBack(address);
    const ask = options.settings.registration === 'open' ? ': sign up with an invite code, or try again' : '; try again';
    throw new HttpError(429, `Too many registrations this hour${ask} in ${waitAll} s`, { 'retry-after': String(waitAll) });
  };

  const signedIn = (req: IncomingMessage): Promise<{ user: User; token: string }> => signedInPlayer(service, req);

  /** A handler for a signed-in player, answering with the player as `work` leaves them. */
  const mine =
    (work: (req: IncomingMessage, user: User, token: string) => Promise<User>): Handler =>
    async (req, res) => {
      const { user, token } = await signedIn(req);
      notePlayer(res, user.name);
      sendResult(res, me(service, await work(req, user, token), admins));
    };

  const upload = (kind: 'skin' | 'cape'): Handler => mine(async (req, user) => setHostedTexture(service, user.id, await readUpload(req, kind, options.uploads)));
  const clear = (kind: 'skin' | 'cape'): Handler => mine(async (_req, user) => service.setTextures(user.id, kind === 'skin' ? { skinUrl: null } : { capeUrl: null }));

  return {
    prefix: '/account/',
    admit: () => {},
    routes: {
      '/account': {
        GET: async (_req, res) => {
          const page = renderPage(options.settings);
          res.writeHead(200, { ...page.headers, 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page.html) });
          res.end(page.html);
        },
      },
      '/account/register': {
        POST: async (req, res) => {
          const { registration } = options.settings;
          if (registration === 'off') throw new HttpError(403, 'Registration is closed');
          const body = await jsonBody(req, ['name', 'password', 'invite']);
          const name = stringField(body, 'name');
          const password = stringField(body, 'password');
          noteName(res, name);
          // An admin's name is kept for the player the owner makes with it (`user add`): whoever
          // registered it first would sign in to the admin page.
          if (admins.has(name.toLowerCase())) throw new HttpError(403, 'This name is kept for an admin of this server; choose another');
          // By invite, a missing code is as good as a wrong one; open sign-up ignores one, but past
          // the hourly limit of all it takes one.
          const code = Object.hasOwn(body, 'invite') ? stringField(body, 'invite') : '';
          const caller = callerFor(req);
          const address = caller.relay ? '' : caller.address;
          const pastLimit = await countRegistration(address, code);
          const invite = registration === 'invite' || pastLimit ? code : undefined;
          try {
            const { username, userUUID, accessToken } = await service.register({ name, password, invite, offlineUuid: options.offlineUuids });
            sendResult(res, { username, userUUID, accessToken });
          } catch (err) {
            if (freeRefusal(err)) {
              await perAddress.giveBack(address);
              if (!pastLimit) await inAll.giveBack('');
            }
            throw err;
          }
        },
      },
      '/account/login': {
        POST: async (req, res) => {
          const body = await jsonBody(req, ['name', 'password']);
          const [name, password] = [stringField(body, 'name'), stringField(body, 'password')];
          noteName(res, name);
          countLogin(req, options.loginLimit);
          // As /auth: a login whose caller has left is not hashed for no one.
          const left = new AbortController();
          res.once('close', () => left.abort());
          // The cookie sent names the browser, as a launcher's clientToken does (without it, a
          // relay's sign-ins count together, as its /auth calls without one do). The token is
          // issued to a new device each time, which the cookie set then names: a value someone
          // planted in the browser is never made one the player signed in with.
          const sent = sentDevice(req);
          const device = randomUUID();
          const from = { ...loginClient(req, sent), issueTo: deviceNamed(device) };
          const { username, userUUID, accessToken } = await service.login(name, password, { field: 'name', callerLeft: left.signal, from });
          res.setHeader('set-cookie', deviceCookie(device, `${options.settings.basePath}/account/login`));
          sendResult(res, { username, userUUID, accessToken });
        },
      },
      '/account/me': { GET: mine(async (_req, user) => user) },
      '/account/password': {
        POST: mine(async (req, user, token) => {
          const body = await jsonBody(req, ['current', 'new']);
          return service.changeOwnPassword(user, token, stringField(body, 'current'), stringField(body, 'new'), loginClient(req));
        }),
      },
      '/account/skin': { PUT: upload('skin'), DELETE: clear('skin') },
      '/account/cape': { PUT: upload('cape'), DELETE: clear('cape') },
      '/account/logout-all': {
        POST: async (req, res) => {
          const { user } = await signedIn(req);
          notePlayer(res, user.name);
          await service.revokeSessions(user.id);
          sendResult(res, true);
        },
      },
      '/account/reset': {
        POST: async (req, res) => {
          const body = await jsonBody(req, ['code', 'password']);
          const user = await service.resetPassword(stringField(body, 'code'), stringField(body, 'password'), loginClient(req));
          notePlayer(res, user.name);
          sendResult(res, { username: user.name });
        },
      },
    },
  };
}
