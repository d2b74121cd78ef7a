// The links an admin hands a player: the account page with an invite or reset code. The code is
// in the fragment (#), which a browser never sends: it cannot reach a server's log, a proxy's,
// or another site as a Referer.
import { normalizeBasePath } from '../http/router.ts';

/** `{publicUrl}{base}/account#KIND=CODE`; undefined without a public URL (there is no address to give). */
export function accountLink(publicUrl: string, basePath: string, kind: 'invite' | 'reset', code: string): string | undefined {
  return publicUrl === '' ? undefined : `${publicUrl}${normalizeBasePath(basePath)}/account#${kind}=${code}`;
}
