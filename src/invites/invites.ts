// Invites to register (--registration invite): codes handed out by an admin (the `invite`
// commands, the admin API), each good for a number of players until it expires. Only their
// digests are kept, so a list shows ids instead. A sign-up takes one use in the store's own
// transaction (Store.createUser); this is how an admin makes, lists and revokes them.
import { digestToken, issueCode } from '../crypto/token.ts';
import { MAX_TTL_SECONDS } from '../limits.ts';
import type { Invite, Store } from '../store/store.ts';
import { invalid, notFound, quote } from '../service/errors.ts';

/** An invite registers one player unless told otherwise. */
export const DEFAULT_INVITE_USES = 1;
/** Most registrations one invite may make: a typo cannot open sign-up to everyone. */
export const MAX_INVITE_USES = 10_000;
/** An invite lives a week unless told otherwise: time to pass it on, and a forgotten one closes itself. */
export const DEFAULT_INVITE_TTL_SECONDS = 7 * 24 * 60 * 60;
/** An invite's id (invite list, revoke): the first hex digits of its digest; 48 bits tell any number an admin keeps apart. */
export const INVITE_ID_CHARS = 12;

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

export const INVITE_ID = new RegExp(`^[0-9a-f]{${INVITE_ID_CHARS}}$`);

export type Invites = ReturnType<typeof createInvites>;

/** The invites of `store`. */
export function createInvites(store: Store, now: () => number = Date.now) {
  return {
    /** A new invite; its code is shown this once. */
    async create(uses = DEFAULT_INVITE_USES, expiresIn = DEFAULT_INVITE_TTL_SECONDS): Promise<InviteView & { code: string }> {
      if (!wholeNumber(uses, MAX_INVITE_USES)) throw invalid(`The uses must be a whole number from 1 to ${MAX_INVITE_USES}`);
      if (!wholeNumber(expiresIn, MAX_TTL_SECONDS)) throw invalid(`The expiry must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}`);
      const { code, digest } = issueCode();
      const at = now();
      const invite = { digest, usesLeft: uses, createdAt: at, expiresAt: at + expiresIn * 1000 };
      await store.createInvite(invite);
      return { ...view(invite), code };
    },
    /** The invites that can still be used. */
    list: async (): Promise<InviteView[]> => (await store.listInvites(now())).map(view),
    /** Deletes an invite named by its code or its id; returns the id. */
    async revoke(codeOrId: string): Promise<string> {
      const prefix = INVITE_ID.test(codeOrId) ? codeOrId : digestToken(codeOrId);
      if ((await store.deleteInvites(prefix)) === 0) throw notFound(`No invite ${quote(codeOrId)}`);
      return prefix.slice(0, INVITE_ID_CHARS);
    },
  };
}
