// Password resets without e-mail: an admin hands a player a one-time code (in a link), which
// sets a new password once, within --reset-ttl. Only its digest is kept; a new code voids the old.
import { digestToken, issueCode } from '../crypto/token.ts';
import type { User } from '../store/store.ts';
import { findUser, gone, hashInPool } from './accounts.ts';
import { requireNewPassword } from './checks.ts';
import type { Context } from './context.ts';
import { invalid } from './errors.ts';
import { clearLoginFailures, UNNAMED_CLIENT } from './throttle.ts';

/** A new reset code for the player (shown this once), and when it expires. */
export async function createResetCode(ctx: Context, who: string): Promise<{ user: User; code: string; expiresAt: number }> {
  const user = await findUser(ctx, who);
  const { code, digest } = issueCode();
  const expiresAt = ctx.now() + ctx.options.resetTtlSeconds * 1000;
  if (!(await ctx.store.setResetCode(user.id, digest, expiresAt))) throw gone(user);
  return { user, code, expiresAt };
}

/**
 * Sets the password of the code's player and ends every session; the code is then used up. The
 * code is looked up before the password is hashed: a guessed code costs a digest, not a hash.
 */
export async function resetPassword(ctx: Context, code: string, password: string, from = UNNAMED_CLIENT): Promise<User> {
  requireNewPassword(password, ctx.options.minPasswordLength);
  const digest = digestToken(code);
  const live = (await ctx.store.findResetCode(digest, ctx.now())) !== undefined;
  const id = live ? await ctx.store.useResetCode(digest, ctx.now(), await hashInPool(ctx, password, from.address)) : undefined;
  const user = id === undefined ? undefined : await ctx.store.findUserById(id);
  // One message for an unknown, used or expired code.
  if (!user) throw invalid('This reset link is not valid');
  // Failed guesses before the reset should not keep the player waiting after it.
  await clearLoginFailures(ctx, user.name, from);
  return user;
}
