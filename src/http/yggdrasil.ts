// /auth's two request shapes. The contract's is {"login", "password"}. The LauncherServer's
// 0.0.5 line forwards its launcher's Yggdrasil-style body unchanged instead,
// {"username", "password", "clientToken"?} (plus keys such as "agent", ignored), and reads
// accessToken, clientToken and selectedProfile from the answer.
import { randomUUID } from 'node:crypto';
import { MAX_CLIENT_TOKEN_CHARS } from '../limits.ts';
import type { AuthResult } from '../service/auth.ts';
import { HttpError } from './envelope.ts';
import { stringField, stringFields, type JsonObject } from './fields.ts';

export interface LoginRequest {
  /** The request field the name came in, for messages. */
  field: 'login' | 'username';
  name: string;
  password: string;
  /** Only in the Yggdrasil shape: the client token sent (maybe none). */
  yggdrasil?: { clientToken: string | undefined };
}

/** The fields of an /auth body, in either shape; the shape is decided by `username` without `login`. */
export function readLoginRequest(body: JsonObject): LoginRequest {
  const hasLogin = Object.hasOwn(body, 'login');
  const hasUsername = Object.hasOwn(body, 'username');
  if (hasLogin && hasUsername) throw new HttpError(400, 'Give "login" or "username", not both');
  if (!hasUsername) return { field: 'login', name: stringField(body, 'login'), password: stringField(body, 'password') };
  const [name, password] = stringFields(body, 'username', 'password');
  // Some Yggdrasil clients send null for "none": a new token then, as when it is left out.
  const sent = Object.hasOwn(body, 'clientToken') && body.clientToken !== null;
  return { field: 'username', name, password, yggdrasil: { clientToken: sent ? clientToken(body) : undefined } };
}

/** The launcher keeps it and sends it back later; bounded and well-formed so it can be echoed safely. */
export function clientToken(body: JsonObject): string {
  const token = stringField(body, 'clientToken');
  if (token.length > MAX_CLIENT_TOKEN_CHARS) throw new HttpError(400, `Field "clientToken" is longer than ${MAX_CLIENT_TOKEN_CHARS} characters`);
  if (!token.isWellFormed()) throw new HttpError(400, 'Field "clientToken" is not well-formed Unicode');
  if (/\p{Cc}/u.test(token)) throw new HttpError(400, 'Field "clientToken" must not hold control characters');
  return token;
}

export type YggdrasilAuthResult = AuthResult & { clientToken: string; selectedProfile: { id: string; name: string } };

/**
 * The contract's answer plus what a Yggdrasil-shaped caller reads: the client token (a new one,
 * 32 lower-case hex digits as Mojang's are, when none was sent), and the profile with its UUID
 * undashed, as the game expects it.
 */
export function yggdrasilResult(result: AuthResult, sent: string | undefined): YggdrasilAuthResult {
  return {
    ...result,
    clientToken: sent ?? randomUUID().replaceAll('-', ''),
    selectedProfile: { id: result.userUUID.replaceAll('-', ''), name: result.username },
  };
}
