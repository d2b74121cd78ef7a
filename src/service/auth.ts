// /auth: a player name and password for a new access token.
import { randomUUID } from 'node:crypto';
import { hashPassword, needsRehash, verifyPassword } from '../crypto/password.ts';
import { issueToken } from '../crypto/token.ts';
import { MAX_TOKENS_PER_USER } from '../limits.ts';
import { requirePasswordSize, requirePlayerName } from './checks.ts';
import type { Context } from './context.ts';
import { ServiceError } from './errors.ts';
import { textureFields, type TextureFields } from './textures.ts';
import { admitLoginAttempt } from './throttle.ts';

export interface AuthResult extends TextureFields {
  username: string;
  userUUID: string;
  accessToken: string;
}

/** One message for an unknown login and a wrong password, so a caller cannot tell which logins exist. */
export const BAD_CREDENTIALS = 'Wrong login or password';

const locked = (reason: string | null): ServiceError => new ServiceError('forbidden', `This account is locked${reason ? `: ${reason}` : ''}`);

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password with today's parameters. An unknown login is verified against it,
 * so that it costs the same time as a wrong password and the timing reveals nothing either.
 */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomUUID());
  return dummy;
}

export interface LoginOptions {
  /** The request field the name came in, for messages: `login`, or `username` (Yggdrasil's shape). */
  field?: string;
  /** Aborts when the caller is gone: a login still waiting for its hash slot then gives the slot up without hashing, and its attempt is taken back from the throttle's count. */
  callerLeft?: AbortSignal;
}

/** Checks the password and issues a token. */
export async function login(ctx: Context, name: string, password: string, { field = 'login', callerLeft }: LoginOptions = {}): Promise<AuthResult> {
  // Over a limit: refused before any work, and not counted as a failed login.
  requirePlayerName(field, name);
  requirePasswordSize(password);
  const slot = await admitLoginAttempt(ctx, name);
  try {
    await slot.ready;
    if (callerLeft?.aborted) {
      // Never checked, so it reveals nothing: it must not count toward the throttle either, or
      // a launcher that times out and retries in a login flood would throttle its own player.
      await ctx.store.uncountLoginFailure(name);
      throw new ServiceError('busy', 'The caller left before its login was checked');
    }
    const user = await ctx.store.findUserByName(name);
    const matches = await verifyPassword(password, user?.passwordHash ?? (await dummyHash()));
    if (!user || !matches) throw new ServiceError('unauthorized', BAD_CREDENTIALS);
    await ctx.store.clearLoginFailures(name);
    // Only after the password: to a guesser a locked account looks like any other.
    if (user.lockedAt !== null) throw locked(user.lockReason);

    const { token, digest } = issueToken();
    const now = ctx.now();
    if (!(await ctx.store.recordLogin(user.id, user.passwordHash, digest, now, now + ctx.options.tokenTtlSeconds * 1000, MAX_TOKENS_PER_USER))) {
      // A lock, removal or password change landed while the password was being checked: the
      // change wins, and the login is refused as it would be now.
      const after = await ctx.store.findUserById(user.id);
      throw after?.lockedAt != null ? locked(after.lockReason) : new ServiceError('unauthorized', BAD_CREDENTIALS);
    }
    if (needsRehash(user.passwordHash)) {
      await ctx.store.setPasswordHash(user.id, await hashPassword(password), false, user.passwordHash);
    }
    return { username: user.name, userUUID: user.id, accessToken: token, ...textureFields(user, ctx.options.variant, ctx.options.hostedBase) };
  } finally {
    slot.release();
  }
}
