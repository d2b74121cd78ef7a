// Invites to register (--registration invite): codes handed out by an admin, each good for a
// number of players until it expires. Only their digests are kept, so a list shows ids instead.
import { digestToken, issueCode } from '../crypto/token.ts';
import { DEFAULT_INVITE_TTL_SECONDS, DEFAULT_INVITE_USES, INVITE_ID_CHARS, MAX_INVITE_USES, MAX_TTL_SECONDS } from '../limits.ts';
import type { Invite } from '../store/store.ts';
import type { Context } from './context.ts';
import { invalid, notFound, quote } from './errors.ts';

export interface InviteView {
  /** The first hex digits of the code's digest: names the invite without being it. */
  id: string;
  usesLeft: number;
  createdAt: number;
  expiresAt: number;
}

function view({ digest, usesLeft, createdAt, expiresAt }: Invite): InviteView {
  return { id: digest.slice(0, INVITE_ID_CHARS), usesLeft, createdAt, expiresAt };
}

const wholeNumber = (n: number, max: number): boolean => Number.isSafeInteger(n) && n >= 1 && n <= max;

/** A new invite; its code is shown this once. */
export async function createInvite(
  ctx: Context,
  uses = DEFAULT_INVITE_USES,
  expiresIn = DEFAULT_INVITE_TTL_SECONDS,
): Promise<InviteView & { code: string }> {
  if (!wholeNumber(uses, MAX_INVITE_USES)) throw invalid(`The uses must be a whole number from 1 to ${MAX_INVITE_USES}`);
  if (!wholeNumber(expiresIn, MAX_TTL_SECONDS)) throw invalid(`The expiry must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}`);
  const { code, digest } = issueCode();
  const now = ctx.now();
  const invite = { digest, usesLeft: uses, createdAt: now, expiresAt: now + expiresIn * 1000 };
  await ctx.store.createInvite(invite);
  return { ...view(invite), code };
}

/** The invites that can still be used. */
export async function listInvites(ctx: Context): Promise<InviteView[]> {
  return (await ctx.store.listInvites(ctx.now())).map(view);
}

const ID = new RegExp(`^[0-9a-f]{${INVITE_ID_CHARS}}$`);

/** Deletes an invite named by its code or its id; returns the id. */
export async function revokeInvite(ctx: Context, codeOrId: string): Promise<string> {
  const prefix = ID.test(codeOrId) ? codeOrId : digestToken(codeOrId);
  if ((await ctx.store.deleteInvites(prefix)) === 0) throw notFound(`No invite ${quote(codeOrId)}`);
  return prefix.slice(0, INVITE_ID_CHARS);
}
