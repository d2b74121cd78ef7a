// A fuzz run: requests generated from a fixed seed (random bytes, wrong JSON types, truncations,
// mutations of valid bodies, huge strings, deep nesting, duplicate and __proto__ keys, odd
// Unicode, random methods, paths and content types) across every endpoint. Every answer must be
// a valid envelope and no 5xx, and no fuzzed login succeeds (the real password is sent only
// inside "__proto__" keys); afterwards the process is still up and valid requests still work.
//
// The seed is in the test's name; MCAUTH_FUZZ_SEED (decimal or 0x hex) runs another one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { seededRandom, seedFrom, seedHex } from '../helpers/random.ts';
import { assertOk, login, join } from './util.ts';

const SEED = seedFrom('MCAUTH_FUZZ_SEED', 0x5eed2025);
const SEED_HEX = seedHex(SEED);
const REQUESTS = 20_000;
/** Requests in flight at once: far below the hash queue (64), so no 503 is ever due. */
const IN_FLIGHT = 16;
const SOCKETS = 8;
/** The whole run must end within this; a hung request fails on its own timeout first. */
const RUN_LIMIT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_BODY = 64 * 1024;

const { int, chance, pick } = seededRandom(SEED);

// ---------------------------------------------------------------------------------------------
// The world the fuzz runs in.

/** The only login names whose /auth bodies may reach a hash: the throttle soon stops them. */
const FUZZ_LOGINS = ['Fz_Alpha', 'fz_beta', 'FZ_GAMMA', 'Fz_Exists'];
const FUZZ_LOGIN_KEYS = new Set(FUZZ_LOGINS.map((n) => n.toLowerCase()));
const NAME_PATTERN = /^[A-Za-z0-9_]{3,16}$/;

/** A player created before the fuzz, used by no hash-reaching fuzz body: checked afterwards. */
const REAL = { name: 'Real_Player', password: 'real-secret-pw', uuid: '', token: '' };

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'fuzz.db');
let server: RunningServer;

before(async () => {
  const [uuid] = await Promise.all([seedPlayer(db, REAL.name, REAL.password), seedPlayer(db, 'Fz_Exists', 'never-guessed-by-the-fuzz')]);
  REAL.uuid = uuid;
  // A long join TTL: the join made after the fuzz must not expire while it is checked.
  server = await startServer(['--db', db, '--join-ttl', '3600']);
  REAL.token = (await login(server, REAL.name, REAL.password)).accessToken;
});

after(async () => {
  await server?.stop();
  tmp.cleanup();
});

// ---------------------------------------------------------------------------------------------
// Generators.

/** Odd pieces of text: RTL marks, joiners, emoji, NUL, combining marks, the Kelvin sign, lone surrogates. */
const ODD = [
  '\u202e', // right-to-left override
  '\u200f', // right-to-left mark
  '\u200d', // zero-width joiner
  '\u200b', // zero-width space
  '\ufeff', // byte order mark
  '\u0000', // NUL (JSON.stringify writes \u0000)
  'e\u0301', // e + combining acute
  '\u0301\u0301\u0301', // combining marks with no base
  '\u212a', // Kelvin sign (lower-cases to k)
  '\u0130', // I with dot (lower-cases to two code points)
  '\u017f', // long s (upper-cases to S)
  '\ud800', // lone high surrogate (JSON.stringify writes \ud800)
  '\udfff', // lone low surrogate
  '\udc00\ud800', // swapped pair
  '👨\u200d👩\u200d👧', // a family joined with ZWJ
  '🙂',
  '\u{1f1fa}\u{1f1e6}', // a flag
  'ǅ', // title-case digraph
  'ß',
  'Ａｌｉｃｅ', // full-width letters
  '\n\r\t',
  '\\',
  '"',
  '\u2028\u2029',
  '\u00ff',
  '\uffff',
];

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_';

function plainString(max: number): string {
  let s = '';
  const n = int(max + 1);
  for (let i = 0; i < n; i++) s += ALNUM[int(ALNUM.length)];
  return s;
}

function oddString(): string {
  let s = '';
  const n = 1 + int(6);
  for (let i = 0; i < n; i++) s += chance(0.5) ? pick(ODD) : plainString(4);
  return s;
}

/** A string of about `size` UTF-8 bytes: around the body limit, or at a field limit. */
function sizedString(size: number): string {
  const unit = pick(['a', 'é', '🙂', '\u0000', '\\', 'x"']);
  const bytes = Buffer.byteLength(JSON.stringify(unit)) - 2;
  return unit.repeat(Math.max(0, Math.floor(size / bytes)));
}

function someName(): string {
  switch (int(8)) {
    case 0:
      return pick(FUZZ_LOGINS);
    case 1:
      return REAL.name;
    case 2:
      return pick([REAL.name.toUpperCase(), REAL.name.toLowerCase(), 'Real_P\u212ayer', 'Real_Playe\u0072\u0301']);
    case 3:
      return oddString();
    case 4:
      return plainString(20);
    case 5:
      return pick(['', 'ab', 'a'.repeat(17), 'a b', 'nobody_here', '__proto__', 'constructor']);
    default:
      return `nx_${plainString(8)}`.slice(0, 16);
  }
}

function someUuid(): string {
  const id = chance(0.5) ? REAL.uuid : '0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9';
  switch (int(7)) {
    case 0:
      return id;
    case 1:
      return id.replaceAll('-', '');
    case 2:
      return id.toUpperCase();
    case 3:
      return id.slice(0, int(id.length));
    case 4:
      return id + oddString();
    case 5:
      return `{${id}}`;
    default:
      return oddString();
  }
}

function someServerId(): string {
  switch (int(5)) {
    case 0:
      return '';
    case 1:
      return 'a'.repeat(63 + int(3)); // around the 64-character limit
    case 2:
      return oddString();
    default:
      return plainString(41);
  }
}

function someToken(): string {
  switch (int(5)) {
    case 0:
      return REAL.token;
    case 1:
      return REAL.token.toUpperCase();
    case 2:
      return 'x'.repeat(63 + int(3)); // around the 64-character limit
    case 3:
      return oddString();
    default:
      return plainString(36);
  }
}

function somePassword(): string {
  switch (int(5)) {
    case 0:
      return 'x'.repeat(255 + int(3)); // around the 256-byte limit
    case 1:
      return 'é'.repeat(127 + int(3)); // two bytes a character
    case 2:
      return oddString();
    default:
      return plainString(20);
  }
}

/** A wrong JSON type for a string field. */
function wrongType(): unknown {
  return pick<() => unknown>([
    () => null,
    () => int(1000),
    () => -0.5,
    () => 1e308,
    () => true,
    () => false,
    () => [],
    () => [plainString(5)],
    () => ({}),
    () => ({ value: plainString(5) }),
    () => [[[[]]]],
  ])();
}

type Endpoint = '/auth' | '/join' | '/hasJoined' | '/profile' | '/profiles' | '/health';

/** A well-formed body for an endpoint (the values themselves may be odd). */
function validBody(endpoint: Endpoint): unknown {
  switch (endpoint) {
    case '/auth':
      return { login: someName(), password: somePassword() };
    case '/join':
      return { accessToken: someToken(), userUUID: someUuid(), serverID: someServerId() };
    case '/hasJoined':
      return { username: someName(), serverID: someServerId() };
    case '/profile':
      return { userUUID: someUuid() };
    case '/profiles': {
      const names = Array.from({ length: int(chance(0.1) ? 120 : 12) }, () => someName());
      return chance(0.5) ? names : { usernames: names };
    }
    case '/health':
      return {};
  }
}

/** The body with one field given a wrong type, removed, or joined by extra fields. */
function swapTypes(body: unknown): unknown {
  if (Array.isArray(body)) {
    const copy: unknown[] = [...body];
    if (copy.length === 0 || chance(0.3)) copy.push(wrongType());
    else copy[int(copy.length)] = wrongType();
    return copy;
  }
  if (typeof body !== 'object' || body === null) return wrongType();
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const keys = Object.keys(copy);
  switch (int(4)) {
    case 0:
      if (keys.length > 0) delete copy[pick(keys)];
      break;
    case 1:
      copy[plainString(6)] = wrongType();
      break;
    default:
      if (keys.length > 0) copy[pick(keys)] = wrongType();
  }
  return copy;
}

function mutateBytes(buf: Buffer): Buffer {
  const bytes = [...buf];
  const edits = 1 + int(4);
  for (let e = 0; e < edits; e++) {
    const at = int(bytes.length + 1);
    switch (int(3)) {
      case 0:
        if (at < bytes.length) bytes[at] = bytes[at]! ^ (1 << int(8));
        break;
      case 1:
        bytes.splice(at, 0, chance(0.5) ? int(256) : pick([0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x00, 0xc0, 0xed, 0xff]));
        break;
      default:
        bytes.splice(at, 1 + int(3));
    }
  }
  return Buffer.from(bytes);
}

function randomBytes(max: number): Buffer {
  const n = int(max + 1);
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = int(256);
  return out;
}

/** Bodies that are JSON text but not what any endpoint takes, or that break the parser's bounds. */
function oddDocument(endpoint: Endpoint): string {
  const field = endpoint === '/auth' ? 'login' : endpoint === '/hasJoined' ? 'username' : endpoint === '/profiles' ? 'usernames' : 'userUUID';
  const depth = pick([7, 8, 9, 50, 1000, 20_000]);
  return pick<() => string>([
    () => '['.repeat(depth) + ']'.repeat(depth),
    () => `{"a":`.repeat(depth) + '1' + '}'.repeat(depth),
    () => `{"${field}":` + '['.repeat(depth) + ']'.repeat(depth) + '}',
    () => `{"${field}":"a","${field}":"b"}`,
    () => `{"login":"Fz_Alpha","password":"p","password":"q"}`,
    () => `{"\\u006cogin":"Fz_Alpha","login":"Fz_Beta","password":"p"}`, // the same key, once escaped
    () => `{"__proto__":{"login":"${REAL.name}","password":"${REAL.password}"}}`,
    () => `{"__proto__":{"login":"${REAL.name}","password":"${REAL.password}"},"password":"x"}`,
    () => `{"__proto__":null,"constructor":{"prototype":{"polluted":true}},"login":"Fz_Alpha","password":"p"}`,
    () => `{"constructor":"x","prototype":"y","toString":"z","hasOwnProperty":"w","${field}":"Fz_Alpha"}`,
    () => `{"usernames":{"__proto__":["${REAL.name}"]}}`,
    () => '{"__proto__":[]}',
    () => `{"${field}":${'9'.repeat(10 + int(60))}}`,
    () => `{"${field}":1e999999}`,
    () => `{"${field}":-0.000000000000000000000000000000000001}`,
    () => `[${'1,'.repeat(int(2000))}1]`,
    () => pick(['null', 'true', 'false', '0', '-1', '""', '"\\ud800"', '[]', '{}', ' ', '\t\n', '\ufeff{}', '{}{}', '{},', '{"a":1}//']),
    () => `{"${field}":"\\ud800\\udc00\\udfff\\u0000"}`,
    () => `{"${field}":"\\u00"}`,
    () => `{"${field}":"\\`,
    () => `{"${field}":"unterminated`,
    () => `{"${field}" "no colon"}`,
    () => `{'${field}':'single quotes'}`,
    () => `{${field}:"unquoted key"}`,
    () => `{"${field}":"a",}`,
    () => `{"${field}":NaN}`,
    () => `{"${field}":Infinity}`,
    () => `{"${field}":undefined}`,
  ])();
}

const INVALID_UTF8 = [
  [0xc0, 0x80], // overlong NUL
  [0xed, 0xa0, 0x80], // a surrogate encoded in UTF-8
  [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
  [0xff],
  [0xe2, 0x82], // cut short
  [0x80],
];

function withInvalidUtf8(text: string): Buffer {
  const buf = Buffer.from(text, 'utf8');
  const at = int(buf.length + 1);
  return Buffer.concat([buf.subarray(0, at), Buffer.from(pick(INVALID_UTF8)), buf.subarray(at)]);
}

/** A body around the 64 KiB limit: a field of that size, or filler past it. */
function hugeBody(endpoint: Endpoint): Buffer {
  const size = MAX_BODY + pick([-200, -40, -1, 0, 1, 2, 100, 4096, 60_000]);
  const base = JSON.stringify(validBody(endpoint));
  const field = endpoint === '/auth' ? 'password' : endpoint === '/hasJoined' || endpoint === '/join' ? 'serverID' : 'userUUID';
  const text = chance(0.7) ? `{"${field}":"${sizedString(size - field.length - 7)}"}` : base + ' '.repeat(Math.max(0, size - Buffer.byteLength(base)));
  return Buffer.from(text, 'utf8');
}

function bodyFor(endpoint: Endpoint): Buffer | undefined {
  const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');
  switch (int(14)) {
    case 0:
    case 1:
      return json(validBody(endpoint));
    case 2:
      return json(swapTypes(validBody(endpoint)));
    case 3: {
      const full = json(validBody(endpoint));
      return full.subarray(0, int(full.length)); // truncated
    }
    case 4:
    case 5:
      return mutateBytes(json(validBody(endpoint)));
    case 6:
      return randomBytes(chance(0.9) ? 64 : 2000);
    case 7:
      return Buffer.from(oddDocument(endpoint), 'utf8');
    case 8:
      return mutateBytes(Buffer.from(oddDocument(endpoint), 'utf8'));
    case 9:
      return withInvalidUtf8(JSON.stringify(validBody(endpoint)));
    case 10:
      return chance(0.1) ? hugeBody(endpoint) : json(validBody(endpoint));
    case 11:
      return json(swapTypes(swapTypes(validBody(endpoint))));
    case 12:
      return undefined; // no body at all
    default:
      return Buffer.from(`${JSON.stringify(validBody(endpoint)).slice(0, -1)},"${oddString()}":${JSON.stringify(oddString())}}`, 'utf8');
  }
}

const ENDPOINTS: Endpoint[] = ['/auth', '/join', '/hasJoined', '/profile', '/profiles', '/health'];
const UNKNOWN_PATHS = [
  '/',
  '/auth/',
  '/AUTH',
  '//auth',
  '/auth/../auth',
  '/%2e%2e/auth',
  '/%00',
  '/profile/x',
  '/health/',
  '/hasjoined',
  '/__proto__',
  '/constructor',
  '/toString',
  '/%F0%9F%99%82',
  '/%ED%A0%80',
  '/' + 'a'.repeat(4000),
  '*',
];
const METHODS = ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'SEARCH', 'QUERY', 'LINK', 'FOO', 'post'];
const CONTENT_TYPES: (string | undefined)[] = [
  undefined,
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/jsonx',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '',
  ';',
  '*/*',
];

interface Spec {
  method: string;
  path: string;
  contentType: string | undefined;
  body: Buffer | undefined;
  /** Sent in pieces without a Content-Length (chunked). */
  chunked: boolean;
}

/**
 * Whether the server could hash for this /auth body: a valid-looking login and password. Such
 * a body is kept only with one of FUZZ_LOGINS (the throttle soon stops each), so hashing stays
 * bounded and the real player never collects failures.
 */
function tameAuthBody(body: Buffer): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return body;
  const o = parsed as Record<string, unknown>;
  const name = Object.hasOwn(o, 'login') ? o.login : undefined;
  const password = Object.hasOwn(o, 'password') ? o.password : undefined;
  if (typeof name !== 'string' || typeof password !== 'string' || !NAME_PATTERN.test(name)) return body;
  if (FUZZ_LOGIN_KEYS.has(name.toLowerCase())) return body;
  return Buffer.from(JSON.stringify({ ...o, login: pick(FUZZ_LOGINS) }), 'utf8');
}

function nextSpec(): Spec {
  const known = chance(0.88);
  let endpoint: Endpoint;
  if (known) {
    // /auth is kept to a moderate share: most of its bodies are refused before any hash anyway.
    endpoint = chance(0.12) ? '/auth' : pick(ENDPOINTS.filter((e) => e !== '/auth'));
  } else endpoint = pick(ENDPOINTS);
  let path: string = known ? endpoint : pick(UNKNOWN_PATHS);
  if (chance(0.05)) path += pick(['?', '?x=1', '?key=abc', '?login=Real_Player&password=x', '#frag', '?' + '%ff'.repeat(20)]);
  const method = endpoint === '/health' && known ? (chance(0.8) ? 'GET' : pick([...METHODS, 'POST'])) : chance(0.9) ? 'POST' : pick(METHODS);
  const contentType = chance(0.75) ? 'application/json' : pick(CONTENT_TYPES);
  let body = method === 'GET' && chance(0.7) ? undefined : bodyFor(endpoint);
  if (body && path.startsWith('/auth') && !path.startsWith('/auth/')) body = tameAuthBody(body);
  return { method, path, contentType, body, chunked: body !== undefined && chance(0.1) };
}

// ---------------------------------------------------------------------------------------------
// Sending.

interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
}

function send(agent: Agent, port: number, spec: Spec): Promise<Answer> {
  return new Promise((done, fail) => {
    const headers: Record<string, string | number> = {};
    if (spec.contentType !== undefined) headers['content-type'] = spec.contentType;
    // Framing is always declared: Node sends a GET, HEAD, DELETE or OPTIONS body without any
    // unless told, and the server would rightly read those bytes as the next request.
    if (spec.body) {
      if (spec.chunked) headers['transfer-encoding'] = 'chunked';
      else headers['content-length'] = spec.body.length;
    }
    const req = request({ host: '127.0.0.1', port, method: spec.method, path: spec.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    // The keep-alive race, as Node's documentation describes it: a kept socket the server closed
    // just as this request went out. A GET or HEAD without a body is sent again on a new socket;
    // anything else counts as unanswered.
    const idempotent = (spec.method === 'GET' || spec.method === 'HEAD') && !spec.body;
    req.on('error', (err: NodeJS.ErrnoException) => (req.reusedSocket && err.code === 'ECONNRESET' && idempotent ? send(agent, port, spec).then(done, fail) : fail(err)));
    if (spec.body && spec.chunked) {
      const cut = Math.floor(spec.body.length / 2);
      req.write(spec.body.subarray(0, cut));
      req.end(spec.body.subarray(cut));
    } else req.end(spec.body);
  });
}

function describeSpec(i: number, spec: Spec): string {
  const body = spec.body === undefined ? '(none)' : spec.body.length > 300 ? `${spec.body.length} bytes: ${JSON.stringify(spec.body.subarray(0, 200).toString('latin1'))}...` : JSON.stringify(spec.body.toString('latin1'));
  return `#${i} ${spec.method} ${spec.path.slice(0, 80)} ct=${JSON.stringify(spec.contentType)}${spec.chunked ? ' chunked' : ''} body=${body}`;
}

/** What is wrong with an answer, or undefined when it is a valid envelope. */
function envelopeProblem(spec: Spec, a: Answer): string | undefined {
  if (a.status >= 500) return `status ${a.status}`;
  if (!/^application\/json\b/i.test(a.contentType ?? '')) return `content-type ${a.contentType}`;
  // A HEAD answer has no body by HTTP's rules: status and type are all it can show.
  if (spec.method === 'HEAD') return a.text === '' ? undefined : 'HEAD answer has a body';
  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return 'body is not JSON';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body is not an object';
  const b = body as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  if (b.success === true && keys === 'result,success') return a.status === 200 ? undefined : `success with status ${a.status}`;
  if (b.success === false && keys === 'error,success' && typeof b.error === 'string' && b.error !== '') {
    return a.status === 200 ? 'failure with status 200' : undefined;
  }
  return 'not an envelope';
}

test(`fuzz: ${REQUESTS} requests from seed ${SEED_HEX} all get a valid envelope, no 5xx, and the server keeps working`, async (t) => {
  const agent = new Agent({ keepAlive: true, maxSockets: SOCKETS });
  const statuses = new Map<number, number>();
  const authStatuses = new Map<number, number>();
  const errors = new Map<string, number>();
  const problems: string[] = [];
  let sent = 0;
  let answered = 0;
  const started = Date.now();
  const deadline = started + RUN_LIMIT_MS;

  // Specs are drawn in order from the one PRNG, so the sequence is the same on every run.
  const specs: Spec[] = [];
  for (let i = 0; i < REQUESTS; i++) specs.push(nextSpec());
  const authShare = specs.filter((s) => s.path.split(/[?#]/)[0] === '/auth' && s.method === 'POST').length / REQUESTS;

  const worker = async (): Promise<void> => {
    while (sent < REQUESTS && Date.now() < deadline) {
      const i = sent++;
      const spec = specs[i]!;
      try {
        const a = await send(agent, server.port, spec);
        answered++;
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (spec.path.split(/[?#]/)[0] === '/auth' && spec.method === 'POST') authStatuses.set(a.status, (authStatuses.get(a.status) ?? 0) + 1);
        const error = /"error":"((?:[^"\\]|\\.){0,60})/.exec(a.text)?.[1];
        if (error !== undefined && (errors.has(error) || errors.size < 60)) errors.set(error, (errors.get(error) ?? 0) + 1);
        // No fuzz body carries a right password (the real one only inside a "__proto__" key).
        const loggedIn = spec.method === 'POST' && spec.path.split(/[?#]/)[0] === '/auth' && a.status === 200;
        const problem = loggedIn ? 'a fuzzed login succeeded' : envelopeProblem(spec, a);
        if (problem && problems.length < 20) problems.push(`${problem}: ${describeSpec(i, spec)} -> ${a.status} ${a.text.slice(0, 200)}`);
      } catch (err) {
        if (problems.length < 20) problems.push(`no answer (${(err as Error).message}): ${describeSpec(i, spec)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  agent.destroy();
  const seconds = (Date.now() - started) / 1000;

  const histogram = (m: Map<number, number>): string => [...m].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ');
  t.diagnostic(`seed ${SEED_HEX}: ${answered} of ${REQUESTS} requests answered in ${seconds.toFixed(1)} s (${(answered / seconds).toFixed(0)}/s)`);
  t.diagnostic(`statuses: ${histogram(statuses)}`);
  t.diagnostic(`distinct error messages: ${errors.size}; ${[...errors].sort(([, a], [, b]) => b - a).map(([e, n]) => `${n}× ${e}`).join(' | ')}`);
  t.diagnostic(`POST /auth (${(authShare * 100).toFixed(1)}% of requests): ${histogram(authStatuses)}`);

  assert.deepEqual(problems, [], `seed ${SEED_HEX}: answers that are not valid envelopes`);
  assert.equal(answered, REQUESTS, `only ${answered} of ${REQUESTS} requests were answered within ${RUN_LIMIT_MS} ms`);
  assert.equal(statuses.get(503) ?? 0, 0, 'no request should have found the hash queue full');
  assert.doesNotMatch(server.stderr(), /unexpected error|failed after the answer began/, 'the server logged an unexpected error');

  // The process is still up and every endpoint still does its job for a player made before.
  assert.deepEqual(assertOk(await server.request('/health')), { status: 'ok' });
  const auth = await login(server, REAL.name, REAL.password);
  assert.equal(auth.username, REAL.name);
  assert.equal(auth.userUUID, REAL.uuid);
  assert.equal(await join(server, auth.accessToken, REAL.uuid, 'after-the-fuzz'), true);
  assert.deepEqual(assertOk(await server.post('/hasJoined', { username: REAL.name.toLowerCase(), serverID: 'after-the-fuzz' })), { userUUID: REAL.uuid });
  assert.deepEqual(assertOk(await server.post('/profile', { userUUID: REAL.uuid.replaceAll('-', '') })), { username: REAL.name });
  assert.deepEqual(assertOk(await server.post('/profiles', [REAL.name.toUpperCase(), 'nobody_here', REAL.name])), [{ id: REAL.uuid, name: REAL.name }]);
  // The token taken before the fuzz is still good too.
  assert.equal(await join(server, REAL.token, REAL.uuid, 'old-token'), true);
});
