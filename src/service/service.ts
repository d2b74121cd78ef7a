// The service: every operation of the HTTP interface and the CLI, over one store.
import * as accounts from './accounts.ts';
import { changeOwnPassword, login, register, replaceToken, userByToken, type LoginOptions } from './auth.ts';
import { createResetCode, resetPassword } from './resets.ts';
import type { Context, ServiceOptions } from './context.ts';
import { profile, profiles } from './lookup.ts';
import { hasJoined, join, joinedPlayer } from './session.ts';
import type { LoginClient } from './throttle.ts';
import { textureUrl } from './textures.ts';
import type { Store, TextureChange, User } from '../store/store.ts';
import { createHashPool } from '../crypto/hash-pool.ts';
import { MAX_TOKEN_CHARS, NAME_QUEUE } from '../limits.ts';
import { digestToken } from '../crypto/token.ts';

export type Service = ReturnType<typeof createService>;

export function createService(store: Store, options: ServiceOptions, now: () => number = Date.now) {
  const pool = createHashPool(options.hashConcurrency, options.hashQueue, NAME_QUEUE);
  const ctx: Context = { store, options, now, pool, refusedRetries: new Set() };
  return {
    /** Hashes running and waiting, for the metrics. */
    hashLoad: () => ({ running: ctx.pool.running, waiting: ctx.pool.waiting }),
    login: (name: string, password: string, options?: LoginOptions) => login(ctx, name, password, options),
    /** `ip`: the address of the player's own client, kept for a check by joinedPlayer. */
    join: (accessToken: string, userUUID: string, serverId: string, ip?: string) => join(ctx, accessToken, userUUID, serverId, ip),
    hasJoined: (username: string, serverId: string) => hasJoined(ctx, username, serverId),
    joinedPlayer: (username: string, serverId: string, ip?: string) => joinedPlayer(ctx, username, serverId, ip),
    /** The public fields of a player, by a UUID already parsed (parseUuid). */
    player: (id: string) => store.findPlayer(id),
    profile: (userUUID: string) => profile(ctx, userUUID),
    profiles: (names: readonly unknown[]) => profiles(ctx, names),
    /** Most names one `profiles` call looks up. */
    maxProfiles: options.maxProfiles,
    addUser: (input: accounts.NewUser) => accounts.addUser(ctx, input),
    /**
     * Stores players brought from another system, checked by the importer (src/import/) by the
     * rules of a new player, in one transaction (see Store.createUsers).
     */
    importUsers: (users: User[], commit: Parameters<Store['createUsers']>[1]) => store.createUsers(users, commit),
    changePassword: (name: string, password: string) => accounts.changePassword(ctx, name, password),
    removeUser: (name: string) => accounts.removeUser(ctx, name),
    listUsers: (after?: string, limit?: number) => accounts.listUsers(ctx, after, limit),
    findUser: (who: string) => accounts.findUser(ctx, who),
    setTextures: (who: string, change: TextureChange) => accounts.setTextures(ctx, who, change),
    revokeSessions: (who: string) => accounts.revokeSessions(ctx, who),
    lockUser: (who: string, reason?: string) => accounts.lockUser(ctx, who, reason),
    unlockUser: (who: string) => accounts.unlockUser(ctx, who),
    renameUser: (who: string, name: string) => accounts.renameUser(ctx, who, name),
    register: (input: accounts.NewUser) => register(ctx, input),
    userByToken: (token: string) => userByToken(ctx, token),
    replaceToken: (token: string, to: LoginClient, tail?: string) => replaceToken(ctx, token, to, tail),
    /** Ends one token; false when it was not one. */
    endToken: async (token: string) => token.length <= MAX_TOKEN_CHARS && store.deleteToken(digestToken(token)),
    changeOwnPassword: (user: User, keep: string, current: string, password: string, from?: LoginClient) =>
      changeOwnPassword(ctx, user, keep, current, password, from),
    createResetCode: (who: string) => createResetCode(ctx, who),
    resetPassword: (code: string, password: string, from?: LoginClient) => resetPassword(ctx, code, password, from),
    findTexture: (hash: string) => store.findTexture(hash),
    /** A capability's secret, kept in the store for every process (see Store.keepSecret). */
    keepSecret: (name: string, value?: string) => store.keepSecret(name, value),
    countTextures: () => store.countTextures(),
    textureHosts: () => store.textureHosts(),
    /** Throws when the store cannot answer a query (for /health). */
    checkStore: async () => store.ping(),
    /** The public address of a player's skin or cape, hosted or external. */
    textureUrl: (url: string | null, hash: string | null) => textureUrl(url, hash, options.hostedBase),
  };
}
