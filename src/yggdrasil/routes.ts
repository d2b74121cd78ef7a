// The Yggdrasil API (--yggdrasil), as authlib-injector specifies it, under {base}/yggdrasil/: what
// HMCL, PCL, PrismLauncher and game servers with authlib-injector call. One account is one player
// is one profile, logged in by the player's name. Everything goes through the same service as the
// JSON API, so the players, passwords, tokens, joins, throttle and limits are the same ones.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerFor, countLogin, deviceNamed, heldFor, loginClient, notePlayer, type Area, type LoginLimit } from '../http/app.ts';
import { readBody, readJson } from '../http/body.ts';
import { perAddressKey } from '../http/client-address.ts';
import { HttpError, sendJson, type FailureBody } from '../http/envelope.ts';
import { requireObject, stringField, type JsonObject } from '../http/fields.ts';
import type { Handler, Routes } from '../http/router.ts';
import { queryOf } from '../http/router.ts';
import { clientToken } from '../http/yggdrasil.ts';
import { HELD_REFUSAL_MS, MAX_PROFILES_ENTRY_BYTES, MAX_TOKEN_CHARS, NAME_PATTERN } from '../limits.ts';
import { ServiceError } from '../service/errors.ts';
import { UNNAMED_CLIENT } from '../service/throttle.ts';
import type { Service } from '../service/service.ts';
import type { Player, User } from '../store/store.ts';
import { parseUuid } from '../uuid.ts';
import { VERSION } from '../version.ts';
import { createWindowLimit, type WindowLimits } from '../ops/window-limit.ts';
import { setHostedTexture } from '../textures/hosted.ts';
import { MAX_TEXTURE_BYTES } from '../textures/limits.ts';
import type { TextureKind } from '../textures/rules.ts';
import type { UploadSettings } from '../textures/upload.ts';
import { formFields } from './multipart.ts';
import { createCertificates } from './certificates.ts';
import type { SigningKey } from './keys.ts';
import { createProfileWriter, Refused, undashed } from './profiles.ts';
import { clientTokenOf, sameClientToken, tokenTail } from './tokens.ts';

/** The specification's answer to a wrong login, whatever was wrong: an unknown name, an e-mail address, a wrong password, a throttled one. */
const INVALID_CREDENTIALS = 'Invalid credentials. Invalid username or password.';
const INVALID_TOKEN = 'Invalid token.';
/** Room in an upload's body for the form around the PNG: its boundaries, field headers and the model. */
const MAX_FORM_OVERHEAD_BYTES = 16 * 1024;
/** A second accepted login (or sign-out) of one account within this is refused, as the specification recommends. */
const LOGIN_INTERVAL_MS = 1000;

export interface YggdrasilOptions {
  key: SigningKey;
  /** The server's name (--server-name), '' none. */
  serverName: string;
  /** --public-url ('' none) and the base path. */
  publicUrl: string;
  basePath: string;
  /** The account page is on, and players may sign up there. */
  accountPage: boolean;
  registration: boolean;
  /** The --address-login-limit count, shared with /auth and the account page. */
  loginLimit?: LoginLimit;
  /** Where the login interval counts: in this process (the default), or where all workers or nodes count. */
  limits?: WindowLimits;
  /** Hosted textures have a public address (--public-url: uploads are served only then), and --hd-textures. */
  uploads: UploadSettings;
}

/** The error names of the specification, by status. */
function errorName(status: number): string {
  if (status === 401 || status === 403 || status === 429) return 'ForbiddenOperationException';
  if (status >= 500) return status === 503 ? 'ServiceUnavailableException' : 'InternalServerException';
  return status === 404 ? 'NotFoundException' : 'IllegalArgumentException';
}

/** Failures in the specification's shape: `{error, errorMessage}`. */
const failure: FailureBody = (status, errorMessage) => ({ error: errorName(status), errorMessage });

const forbidden = (message: string): HttpError => new HttpError(403, message);

/** Answers 204, or 200 with `body`. */
function answer(res: ServerResponse, body?: unknown): void {
  if (body !== undefined) {
    sendJson(res, 200, body);
  } else {
    res.writeHead(204, { 'cache-control': 'no-store' });
    res.end();
  }
}

/** A refused login as the specification answers it: 403, but for a server too busy to check it (503). Held as /auth's refusals are. */
function loginRefusal(req: IncomingMessage, err: unknown): unknown {
  if (err instanceof ServiceError) {
    if (err.kind === 'busy') return err;
    // A locked account says so, to the holder of its password only.
    return new HttpError(403, err.kind === 'forbidden' ? err.message : INVALID_CREDENTIALS, {}, err.rule, heldFor(req, err));
  }
  if (err instanceof HttpError && err.status === 429) return new HttpError(403, INVALID_CREDENTIALS, err.headers, err.refusal, err.heldMs);
  return err;
}

/**
 * New profile signatures one address may cause a minute, in each process (a budget of its CPU):
 * a 4096-bit signature costs a millisecond and more; a game or launcher asks for a few players'
 * at a time, most of them kept from an earlier ask.
 */
const FRESH_SIGNATURES_PER_MINUTE = 120;

/** How long skinDomains is kept before the players' texture hosts are read again. */
const SKIN_DOMAINS_MS = 60_000;

/** The host name of a URL's authority (`user@host:port`), as skinDomains lists it; none when it is no host. */
function hostnameOf(authority: string): string[] {
  try {
    return [new URL(`http://${authority}`).hostname];
  } catch {
    return [];
  }
}

/** A clientToken for a launcher that sent none: 32 hex digits, as Mojang's are. */
const newClientToken = (): string => randomUUID().replaceAll('-', '');

/** A field that may be left out (or null, as some clients send for none). */
const given = (body: JsonObject, name: string): boolean => Object.hasOwn(body, name) && body[name] !== null;

export function yggdrasilArea(service: Service, options: YggdrasilOptions): Area {
  const profiles = createProfileWriter(options.key, service.textureUrl, options.uploads.hostsTextures);
  const certificates = createCertificates(options.key);
  /** New signatures of profiles one address may have made a minute (the profile route's, unsigned=false). */
  const freshSignatures = createWindowLimit(FRESH_SIGNATURES_PER_MINUTE, 60_000);
  const base = options.basePath;
  /**
   * The specification's interval: one accepted login or sign-out of an account (by its name in
   * lower case) a second, counted where every worker and node sees it when the limits are shared.
   */
  const interval = options.limits ? options.limits('yggdrasil interval', 1, LOGIN_INTERVAL_MS) : createWindowLimit(1, LOGIN_INTERVAL_MS);

  /**
   * Checks the name and password as /auth does, from the launcher that sent `sent` (if it sent a
   * clientToken), for a token issued to `kept` (none: no token is kept). A login no check could
   * accept (an e-mail address) is refused as a wrong one, and so is one within the interval after
   * an accepted one: only a right password sets that interval going, so no one else can use it to
   * keep the player out, and a login refused in it issues no token. The second opens when a
   * login is accepted, and a login that arrived within it is refused, however long its password
   * took to check: so two accepted logins' tokens are a second apart at least, and of two at once
   * only one is accepted.
   */
  async function checkPassword(req: IncomingMessage, res: ServerResponse, body: JsonObject, sent?: string, kept?: string) {
    const name = stringField(body, 'username');
    const password = stringField(body, 'password');
    const key = name.toLowerCase();
    if (NAME_PATTERN.test(name)) notePlayer(res, name);
    const left = new AbortController();
    res.once('close', () => left.abort());
    // Taken only once the password is right, just before a token is issued: refused when the
    // login came within the second after the last accepted one, which opens a second at its acceptance.
    const arrived = Date.now();
    let admitted = false;
    const admit = async (): Promise<boolean> => (admitted = (await interval.take(key, arrived, Date.now())) === 0);
    try {
      countLogin(req, options.loginLimit);
      if (!NAME_PATTERN.test(name)) throw new ServiceError('unauthorized', INVALID_CREDENTIALS);
      const from = { ...loginClient(req, sent), ...(kept !== undefined && { issueTo: deviceNamed(kept) }) };
      const tail = kept === undefined ? undefined : tokenTail(kept);
      return await service.login(name, password, { field: 'username', callerLeft: left.signal, from, tokenTail: tail, admit });
    } catch (err) {
      // Admitted, then failed (a busy database): the interval was not used.
      if (admitted) await Promise.resolve(interval.giveBack(key)).catch(() => {});
      throw loginRefusal(req, err);
    }
  }

  /** The player of a live token with the clientToken sent (if one was), else 403. */
  async function tokenHolder(body: JsonObject): Promise<{ user: User; token: string; held: string | undefined }> {
    const token = stringField(body, 'accessToken');
    const sent = given(body, 'clientToken') ? clientToken(body) : undefined;
    const user = await service.userByToken(token);
    const held = clientTokenOf(token);
    if (!user || (sent !== undefined && !sameClientToken(sent, held))) throw forbidden(INVALID_TOKEN);
    return { user, token, held };
  }

  /** The player of the Bearer token of a minecraftservices call, else 401. */
  async function bearer(req: IncomingMessage): Promise<User> {
    const match = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
    const user = match ? await service.userByToken(match[1]!) : undefined;
    if (!user) throw new HttpError(401, INVALID_TOKEN, { 'www-authenticate': 'Bearer' });
    return user;
  }

  /** The Bearer token's player and the texture kind of an upload's path, when the profile is the player's own (else 403). */
  async function ownTexture(req: IncomingMessage, params: Record<string, string>): Promise<{ user: User; kind: TextureKind }> {
    const user = await bearer(req);
    const kind = params.kind;
    if (kind !== 'skin' && kind !== 'cape') throw new HttpError(404, 'The texture is skin or cape');
    if (parseUuid(params.uuid!) !== user.id) throw forbidden('The profile is not this account\'s');
    return { user, kind };
  }

  const post = (run: (body: JsonObject, req: IncomingMessage, res: ServerResponse) => Promise<unknown>): Partial<Record<string, Handler>> => ({
    POST: async (req, res) => answer(res, await run(requireObject(await readJson(req)), req, res)),
  });
  const get = (run: (req: IncomingMessage, params: Record<string, string>) => Promise<unknown>): Partial<Record<string, Handler>> => ({
    GET: async (req, res, params) => answer(res, await run(req, params)),
  });
  const user = (u: Pick<User, 'id'>) => ({ id: undashed(u.id), properties: [] });

  // skinDomains: --public-url's host (textures hosted here) and the hosts of the players' textures
  // kept on other sites, read again at most once a minute (a scan of the players).
  const hostedHere = options.publicUrl === '' ? [] : [new URL(options.publicUrl).hostname];
  let domains: { at: number; list: Promise<string[]> } | undefined;
  let lastRead = hostedHere;
  const skinDomains = (): Promise<string[]> => {
    if (!domains || Date.now() - domains.at >= SKIN_DOMAINS_MS) {
      const read = service.textureHosts().then((hosts) => (lastRead = [...new Set([...hostedHere, ...hosts.flatMap(hostnameOf)])]));
      // A read that failed (the database away) answers the last list read, and is tried again at the next request.
      domains = { at: Date.now(), list: read };
      read.catch(() => (domains = undefined));
    }
    return domains.list.catch(() => lastRead);
  };

  // The rest the settings decide whole: made once, not at every request.
  const site = options.publicUrl === '' ? undefined : `${options.publicUrl}${base}`;
  const links = options.accountPage && site ? { homepage: `${site}/account`, ...(options.registration && { register: `${site}/account` }) } : {};
  const root = {
    meta: {
      serverName: options.serverName || 'mcauth',
      implementationName: 'mcauth',
      implementationVersion: VERSION,
      links,
      'feature.non_email_login': true,
      'feature.enable_profile_key': true,
    },
    skinDomains: hostedHere,
    signaturePublickey: options.key.publicPem,
  };
  const metadata = get(async () => ({ ...root, skinDomains: await skinDomains() }));

  const routes: Routes = {
    '/yggdrasil': metadata,
    '/yggdrasil/': metadata,
    '/yggdrasil/authserver/authenticate': post(async (body, req, res) => {
      const sent = given(body, 'clientToken') ? clientToken(body) : undefined;
      const kept = sent ?? newClientToken();
      const result = await checkPassword(req, res, body, sent, kept);
      const profile = profiles.brief({ id: result.userUUID, name: result.username });
      return {
        accessToken: result.accessToken,
        clientToken: kept,
        availableProfiles: [profile],
        selectedProfile: profile,
        ...(body.requestUser === true && { user: user({ id: result.userUUID }) }),
      };
    }),
    '/yggdrasil/authserver/refresh': post(async (body) => {
      const chosen = given(body, 'selectedProfile') ? stringField(requireObject(body.selectedProfile), 'id') : undefined;
      const { user: holder, token, held } = await tokenHolder(body);
      if (chosen !== undefined) {
        // The token's profile is always the account's one: choosing it again changes nothing.
        const id = parseUuid(chosen);
        if (id === undefined || (id !== holder.id && !(await service.player(id)))) throw new HttpError(400, 'No such profile');
        if (id !== holder.id) throw forbidden('The profile is not this account\'s');
      }
      // A token of the JSON API has no clientToken: it gets one now.
      const kept = held ?? newClientToken();
      const result = await service.replaceToken(token, { ...UNNAMED_CLIENT, issueTo: deviceNamed(kept) }, tokenTail(kept));
      if (!result) throw forbidden(INVALID_TOKEN);
      const profile = profiles.brief({ id: result.userUUID, name: result.username });
      return { accessToken: result.accessToken, clientToken: kept, selectedProfile: profile, ...(body.requestUser === true && { user: user(holder) }) };
    }),
    '/yggdrasil/authserver/validate': post(async (body) => {
      await tokenHolder(body);
    }),
    '/yggdrasil/authserver/invalidate': post(async (body) => {
      await service.endToken(stringField(body, 'accessToken'));
    }),
    '/yggdrasil/authserver/signout': post(async (body, req, res) => {
      const result = await checkPassword(req, res, body);
      await service.revokeSessions(result.userUUID);
    }),
    '/yggdrasil/sessionserver/session/minecraft/join': post(async (body, req) => {
      const token = stringField(body, 'accessToken');
      const profile = stringField(body, 'selectedProfile');
      const serverId = stringField(body, 'serverId');
      // No token of ours is longer: not one, as an unknown token is not (the JSON API says why, in-band).
      if (token.length > MAX_TOKEN_CHARS) throw forbidden(INVALID_TOKEN);
      // The address the join came from, for hasJoined's `ip`: the player's own, as a launcher calls directly.
      if (!(await service.join(token, profile, serverId, callerFor(req).address))) throw forbidden(INVALID_TOKEN);
    }),
    '/yggdrasil/sessionserver/session/minecraft/hasJoined': get(async (req) => {
      const query = queryOf(req);
      const name = query.get('username');
      const serverId = query.get('serverId');
      const ip = query.get('ip');
      if (name === null || serverId === null) throw new HttpError(400, 'Give username and serverId');
      const joined = async (): Promise<Player> => service.joinedPlayer(name, serverId, ip === null ? undefined : perAddressKey(ip));
      const player = await joined().catch((err: unknown) => {
        // Not joined, or not a name or server id any join could have: not joined, as the game server reads it.
        if (err instanceof ServiceError && (err.kind === 'not_found' || err.kind === 'invalid')) return undefined;
        throw err;
      });
      return player && profiles.complete(player, true);
    }),
    '/yggdrasil/sessionserver/session/minecraft/profile/:uuid': get(async (req, params) => {
      const id = parseUuid(params.uuid!);
      const player = id === undefined ? undefined : await service.player(id);
      if (!player) return undefined;
      // Open to anyone: a caller asking for the signed profiles of many players is held to a budget
      // of new signatures (those kept are free), so it cannot make the server sign all day.
      const caller = callerFor(req);
      let wait = 0;
      const mayMake = (): boolean => caller.relay || (wait = freshSignatures.take(caller.address, Date.now())) === 0;
      try {
        return profiles.complete(player, queryOf(req).get('unsigned') === 'false', mayMake);
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        throw new HttpError(429, `Too many signed profiles from this address; try again in ${wait} s`, { 'retry-after': String(wait) }, 'signature_budget', caller.proxied ? 0 : HELD_REFUSAL_MS);
      }
    }),
    '/yggdrasil/api/profiles/minecraft': {
      POST: async (req, res) => {
        const names = await readJson(req, service.maxProfiles * MAX_PROFILES_ENTRY_BYTES);
        if (!Array.isArray(names)) throw new HttpError(400, 'Request body must be an array of names');
        answer(res, (await service.profiles(names)).found.map(profiles.brief));
      },
    },
    ...(options.uploads.hostsTextures && {
      '/yggdrasil/api/user/profile/:uuid/:kind': {
        PUT: async (req, res, params) => {
          const { user, kind } = await ownTexture(req, params);
          const fields = formFields(await readBody(req, MAX_TEXTURE_BYTES + MAX_FORM_OVERHEAD_BYTES), req.headers['content-type']);
          const file = fields.get('file');
          if (!file) throw new HttpError(400, 'The form has no "file"');
          const model = fields.get('model')?.toString();
          if (model !== undefined && model !== '' && model !== 'slim') throw new HttpError(400, 'model must be "slim" or ""');
          const isAlex = kind === 'skin' ? model === 'slim' : undefined;
          await setHostedTexture(service, user.id, { kind, bytes: file, hd: options.uploads.hdTextures, ...(isAlex !== undefined && { isAlex }) });
          answer(res);
        },
        DELETE: async (req, res, params) => {
          const { user, kind } = await ownTexture(req, params);
          await service.setTextures(user.id, kind === 'skin' ? { skinUrl: null } : { capeUrl: null });
          answer(res);
        },
      },
    }),
    '/yggdrasil/minecraftservices/player/certificates': { POST: async (req, res) => answer(res, await certificates.issue(await bearer(req))) },
    '/yggdrasil/minecraftservices/publickeys': get(async () => certificates.publicKeys),
    '/yggdrasil/minecraftservices/player/attributes': get(async (req) => {
      await bearer(req);
      return {
        privileges: { onlineChat: { enabled: true }, multiplayerServer: { enabled: true }, multiplayerRealms: { enabled: true }, telemetry: { enabled: false } },
        profanityFilterPreferences: { profanityFilterOn: false },
      };
    }),
    '/yggdrasil/minecraftservices/privacy/blocklist': get(async (req) => {
      await bearer(req);
      return { blockedProfiles: [] };
    }),
  };
  // Open to every caller: launchers and game servers cannot hold the API key.
  return { prefix: '/yggdrasil/', routes, admit: () => undefined, failure };
}
