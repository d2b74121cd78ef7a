// Assertions shared by the end-to-end tests (not a test file itself); processes are in ../helpers/process.ts.
import assert from 'node:assert/strict';
import { fetchReply } from '../helpers/process.ts';
import type { RawServer, Reply, RunningServer } from '../helpers/process.ts';

/** A dashed, lower-case UUID, as every answer must carry it. */
export const UUID_DASHED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Any UUID text (dashed, either case). */
export const UUID_ANY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whether `ok` comes true within `ms` (asked at least once, then again every 100 ms). */
export async function until(ok: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = performance.now() + ms; ; await sleep(100)) {
    if (await ok()) return true;
    if (performance.now() >= end) return false;
  }
}

export const undash = (uuid: string): string => uuid.replaceAll('-', '');

/** Asserts the answer is declared as JSON. */
export function assertJsonType(r: Reply): void {
  assert.match(r.headers.get('content-type') ?? '(none)', /^application\/json\b/i, `content-type of: ${r.text}`);
}

/** Asserts an exact failure envelope with the given status and message. */
export function assertFail(r: Reply, status: number, error: string): void {
  assert.equal(r.status, status, `status of: ${r.text}`);
  assertJsonType(r);
  assert.deepEqual(r.body, { success: false, error }, `body: ${r.text}`);
}

/** Asserts a success envelope (status 200, exactly `success` and `result`) and returns `result`. */
export function assertOk(r: Reply): any {
  assert.equal(r.status, 200, `status of: ${r.text}`);
  assertJsonType(r);
  assert.equal(typeof r.body, 'object', `body: ${r.text}`);
  assert.notEqual(r.body, null);
  assert.deepEqual(Object.keys(r.body).sort(), ['result', 'success'], `body: ${r.text}`);
  assert.equal(r.body.success, true, `body: ${r.text}`);
  return r.body.result;
}

/**
 * What /join and /profiles answer every refusal with, status 200: a LauncherServer throws on
 * `success:false` from them, and the throw ends its process.
 */
export const IN_BAND: Record<string, unknown> = { '/join': false, '/profiles': [] };

/** Asserts a refusal as `path` gives it: in-band (see IN_BAND) for /join and /profiles, else the failure envelope. */
export function assertRefused(r: Reply, path: string, status: number, error: string): void {
  if (Object.hasOwn(IN_BAND, path)) assert.deepEqual(assertOk(r), IN_BAND[path], `${path} answers in-band`);
  else assertFail(r, status, error);
}

/** Logs in and returns the /auth result (asserting success). */
export async function login(s: RunningServer, name: string, password: string): Promise<any> {
  return assertOk(await s.post('/auth', { login: name, password }));
}

/** Calls /join and returns its boolean result (asserting a success envelope). */
export async function join(s: RunningServer, accessToken: string, userUUID: string, serverID: string): Promise<boolean> {
  const result = assertOk(await s.post('/join', { accessToken, userUUID, serverID }));
  assert.equal(typeof result, 'boolean', `join result: ${JSON.stringify(result)}`);
  return result;
}

/** POSTs JSON to a server given by host and port; same shape as the helper's Reply. */
export function postTo(host: string, port: number, path: string, body: unknown): Promise<Reply> {
  return fetchReply(`http://${host}:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * An admin view of a player with its clock-made fields (`createdAt`, `lastLoginAt`) checked for
 * their form (ISO 8601, or null for a player who never logged in) and taken out, so that a test
 * can compare the rest exactly; the admin lifecycle test checks their values.
 */
export function withoutTimes(player: any): any {
  if (player === null || typeof player !== 'object' || !('createdAt' in player)) return player;
  const { createdAt, lastLoginAt, ...rest } = player;
  assert.match(createdAt, ISO_TIME);
  if (lastLoginAt !== null) assert.match(lastLoginAt, ISO_TIME);
  return rest;
}

/** The body of an admin answer with every player in it passed through withoutTimes. */
export function adminBodyWithoutTimes(body: any): any {
  if (body?.success !== true) return body;
  const result = body.result;
  if (Array.isArray(result?.users)) return { ...body, result: { ...result, users: result.users.map(withoutTimes) } };
  return { ...body, result: withoutTimes(result) };
}

/** The request lines of a server's JSON log. */
export const requestLines = (s: RawServer): any[] =>
  s
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'request');

/** A counter's value in a /metrics text. */
export const metricSample = (text: string, series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
