// The real caller in front of the real server. Each LauncherServer generation (built from source
// and read from ../shared/launcherserver beside the repo; skipped where it is absent) relays what
// anyone sends to its public authlib routes to dist/server.js. Its JsonAuthProvider throws on
// `success:false`, on a body that is not JSON and on a refused connection, and its join and
// profiles handlers do not catch: one such answer ends the LauncherServer process. So, for each
// generation:
// - the requests from the issue (a join with selectedProfile "not-a-uuid", one with a
//   100-character accessToken, a profiles look-up of [1]) and joins as large as it passes on are
//   answered, in-band on this side;
// - then generated requests (seeded: every JSON type in every field, strings up to 100 KB, odd
//   Unicode, long lists, wrong content types, bodies that are not JSON or empty) to its join and
//   profiles routes, and a few to hasJoined and profile: each answer is one the LauncherServer
//   gives when it lives, and this service logged every join and look-up passed to it as a 200;
// - afterwards it is still up, and a player logs in over its websocket with the launcher's own
//   client, joins through it and is seen by hasJoined.
// Not sent: what ends the LauncherServer whatever this service answers (a join body of JSON
// `null`: it reads null.accessToken before calling anyone).
//
// The seed is in the test's name; MCAUTH_FUZZ_SEED (decimal or 0x hex) runs another one.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { publicDecrypt, publicEncrypt } from 'node:crypto';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fetchReply, ROOT, serverCommand, spawnListening, tempDir, type Listening } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { GENERATIONS, LISTED_SKIN_DOMAIN, missingGeneration, publicKeyOf, sharedFile, startLauncherServer, type Generation, type RunningLauncherServer } from '../helpers/launcherserver.ts';
import { seededRandom, seedFrom, seedHex, type Random } from '../helpers/random.ts';
import { assertOk, postTo, undash } from './util.ts';

const SEED = seedFrom('MCAUTH_FUZZ_SEED', 0x1a0c4e55);
/** Generated requests a generation gets, by route: well over a thousand to join and profiles. */
const JOINS = 800;
const LOOKUPS = 500;
const GETS = 60;
const IN_FLIGHT = 8;
/** The whole generated run must end within this; a hung request fails on its own timeout first. */
const RUN_LIMIT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 20_000;
/** How long this service may take to log what it answered (it writes its log once a tick). */
const LOG_WAIT_MS = 30_000;
/** A crash shows first as a broken connection; its exit follows within this. */
const EXIT_WAIT_MS = 10_000;

const JOIN = '/authlib/sessionserver/session/minecraft/join';
const HAS_JOINED = '/authlib/sessionserver/session/minecraft/hasJoined';
const PROFILE = '/authlib/sessionserver/session/minecraft/profile';
const PROFILES = '/authlib/api/profiles/minecraft';

const PW = 'correct-horse-1';

/** Its join handler's answer to `result: false`. */
const INVALID_CREDENTIALS = { error: 'ForbiddenOperationException', errorMessage: 'Invalid credentials.' };
/** Its answer to a body over its own limit (raw-body's "100kb"), before it calls anyone. */
const TOO_LARGE = { error: 'request entity too large' };

// ---------------------------------------------------------------------------------------------
// Talking to the LauncherServer.

interface Probe {
  route: 'join' | 'profiles' | 'hasJoined' | 'profile';
  method: 'GET' | 'POST';
  path: string;
  contentType: string | undefined;
  body: Buffer | undefined;
}

interface Answer {
  status: number;
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: any;
}

const postJson = (route: Probe['route'], path: string, body: unknown): Probe => ({
  route,
  method: 'POST',
  path,
  contentType: 'application/json',
  body: Buffer.from(JSON.stringify(body)),
});

const get = (route: Probe['route'], path: string): Probe => ({ route, method: 'GET', path, contentType: undefined, body: undefined });

/** Sends on a connection of its own (a broken one then shows which request broke it). */
function send(port: number, probe: Probe): Promise<Answer> {
  return new Promise((done, fail) => {
    const headers: Record<string, string | number> = {};
    if (probe.contentType !== undefined) headers['content-type'] = probe.contentType;
    if (probe.body !== undefined) headers['content-length'] = probe.body.length;
    const req = request({ host: '127.0.0.1', port, method: probe.method, path: probe.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        done({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', fail);
    req.end(probe.body);
  });
}

function describeProbe(probe: Probe): string {
  const body =
    probe.body === undefined
      ? '(none)'
      : probe.body.length > 300
        ? `${probe.body.length} bytes: ${JSON.stringify(probe.body.subarray(0, 200).toString('utf8'))}...`
        : JSON.stringify(probe.body.toString('utf8'));
  return `${probe.method} ${probe.path.slice(0, 120)} content-type=${JSON.stringify(probe.contentType)} body=${body}`;
}

/** Sends `probe`; when the connection breaks, fails saying whether the LauncherServer ended, with its last output. */
async function sendTo(ls: RunningLauncherServer, probe: Probe, what: string): Promise<Answer> {
  if (!ls.running()) assert.fail(`the LauncherServer had already exited before ${what}`);
  try {
    return await send(ls.port, probe);
  } catch (err) {
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([ls.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), EXIT_WAIT_MS)))]);
    clearTimeout(timer);
    const how = exit ? `the LauncherServer exited (${exit.code ?? exit.signal})` : 'the LauncherServer broke the connection';
    assert.fail(`${how} on ${what}: ${(err as Error).message}\n  ${describeProbe(probe)}\nits output ends:\n${ls.output().slice(-4000)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// This service's side: its request log.

interface LoggedRequest {
  method: string;
  path: string;
  status: number;
  outcome?: string;
  reason?: string;
}

/** The requests to `path` this service has logged so far (whole lines only). */
function logged(out: string, path: string): LoggedRequest[] {
  const marker = `"path":${JSON.stringify(path)}`;
  const found: LoggedRequest[] = [];
  for (const line of out.slice(0, out.lastIndexOf('\n') + 1).split('\n')) {
    if (!line.includes(marker)) continue;
    const entry = JSON.parse(line);
    if (entry.msg === 'request' && entry.path === path) found.push(entry);
  }
  return found;
}

/** Resolves once this service has logged `count` requests to `path`, with them. */
function loggedUntil(backend: Listening, path: string, count: number): Promise<LoggedRequest[]> {
  return backend.waitFor(`${count} logged requests to ${path}`, (out) => {
    const found = logged(out, path);
    return found.length >= count ? found : undefined;
  }, LOG_WAIT_MS);
}

/**
 * Whatever this service has logged before now: a request of our own, sent after, is logged
 * after them. For checking that nothing reached it.
 */
async function settledLog(backend: Listening): Promise<void> {
  const health = logged(backend.stdout(), '/health').length;
  assert.equal((await fetchReply(`http://127.0.0.1:${backend.port}/health`)).status, 200);
  await loggedUntil(backend, '/health', health + 1);
}

// ---------------------------------------------------------------------------------------------
// What the LauncherServer's answers say.

/** Its answer to a join: this service's result (true, false), or refused before it asked. Anything else fails. */
function joinOutcome(a: Answer, what: string): 'true' | 'false' | 'not asked' {
  // It ends a successful join with an empty body and Node's default status.
  if (a.status === 200 && a.text === '') return 'true';
  if (a.status === 400 && isDeepStrictEqual(a.json, INVALID_CREDENTIALS)) return 'false';
  if (a.status === 400 && a.json?.error === 'BadRequestException') return 'not asked';
  if (a.status === 413 && isDeepStrictEqual(a.json, TOO_LARGE)) return 'not asked';
  assert.fail(`unexpected answer to ${what}: ${a.status} ${a.text.slice(0, 300)}`);
}

/** Its answer to a profiles look-up: this service's list, or refused before it asked. */
function lookupOutcome(gen: Generation, players: Players, a: Answer, what: string): 'asked' | 'not asked' {
  if (!gen.routesProfiles) {
    assert.equal(a.status, 404, `${what}: ${a.text}`);
    return 'not asked';
  }
  if (a.status === 200) {
    assert.ok(Array.isArray(a.json), `${what}: ${a.text}`);
    for (const entry of a.json) assert.deepEqual(entry, { id: players.uuid[entry?.name], name: entry?.name }, `${what}: ${a.text}`);
    return 'asked';
  }
  if (a.status === 400 && ['BadRequestException', 'IllegalArgumentException'].includes(a.json?.error)) return 'not asked';
  if (a.status === 413 && isDeepStrictEqual(a.json, TOO_LARGE)) return 'not asked';
  assert.fail(`unexpected answer to ${what}: ${a.status} ${a.text.slice(0, 300)}`);
}

/** Its answers to hasJoined (a profile, or an error) and profile (one, none, or no such route). */
function checkGet(probe: Probe, a: Answer, what: string): void {
  const allowed = probe.route === 'hasJoined' ? [200, 400] : [200, 204, 404];
  assert.ok(allowed.includes(a.status), `unexpected answer to ${what}: ${a.status} ${a.text.slice(0, 300)}`);
  if (a.status === 200) assert.equal(typeof a.json?.name, 'string', `${what}: ${a.text.slice(0, 300)}`);
}

// ---------------------------------------------------------------------------------------------
// Generated requests.

interface Players {
  /** UUID (dashed) by name. */
  uuid: Record<string, string>;
  /** A live token of each. */
  token: Record<string, string>;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_';
const HEX = '0123456789abcdef';
/** Odd pieces of text: lone and swapped surrogates, NUL, RTL and zero-width marks, emoji, look-alikes. */
const ODD = [
  '\ud800',
  '\udbff',
  '\udfff',
  '\udc00\ud800',
  '\u0000',
  '\u0001',
  '\u202e', // right-to-left override
  '\u200f', // right-to-left mark
  '\u200d', // zero-width joiner
  '\u200b', // zero-width space
  '\ufeff', // byte order mark
  '\u2028\u2029',
  '🙂',
  '👨\u200d👩\u200d👧',
  '\u{1f1fa}\u{1f1e6}', // a flag
  'e\u0301',
  '\u0301',
  'Ａｌｉｃｅ', // full-width letters
  '\u212a', // Kelvin sign
  'ß',
  '\uffff',
  '\u{10ffff}',
  '\\',
  '"',
  '\n\r\t',
  '%00',
];
/** Units of the long strings, each a different size once in JSON (1 to 6 bytes). */
const LONG_UNITS = ['a', 'é', '🙂', '\u0000', '\ud800', '"', '\u202e'];
/** Sizes in JSON bytes of a long string: up to 100 KB, some around the LauncherServer's limit. */
const LONG_SIZES = [1_000, 10_000, 50_000, 90_000, 100_000, 101_500, 102_300, 103_000];
const NUMBERS = [0, -0, 1, -1, 1.5, 0.1, 1e308, -1e-308, 2 ** 53 + 2, 1e21];
const NAMES = ['Alice', 'bob', 'ALICE', 'aLiCe', 'Nobody_Here', 'ab', 'a'.repeat(17), 'Al ice', 'Alice\u0000', 'Ａｌｉｃｅ', 'Alic\u212a', '__proto__', ''];
const CONTENT_TYPES = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/octet-stream',
  'APPLICATION/JSON',
  'buffer', // the dev generation reads such a body as a file upload
  '',
];

/**
 * The largest body generated: a little over the LauncherServer's limit. One far over it (MBs) is
 * answered before it is all sent, and the closing connection may then cut the sending (EPIPE),
 * which would say nothing of either server.
 */
const MAX_GENERATED_BODY = 128 * 1024;

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/** Objects without a prototype, so that a "__proto__" key is an own key and is sent. */
const bare = (): Record<string, unknown> => Object.create(null) as Record<string, unknown>;

function generators(r: Random, p: Players) {
  const chars = (alphabet: string, n: number): string => Array.from({ length: n }, () => alphabet[r.int(alphabet.length)]).join('');
  const plain = (max: number): string => chars(ALNUM, r.int(max + 1));
  const odd = (): string => Array.from({ length: 1 + r.int(8) }, () => (r.chance(0.6) ? r.pick(ODD) : plain(4))).join('');
  const long = (): string => {
    const unit = r.pick(LONG_UNITS);
    return unit.repeat(Math.floor(r.pick(LONG_SIZES) / (Buffer.byteLength(JSON.stringify(unit)) - 2)));
  };
  const alice = (): string => p.uuid.Alice!;
  const bob = (): string => p.uuid.Bob!;
  /** Values a caller might mean: live tokens, UUIDs in every form, names. */
  const known = (): string =>
    r.pick([
      () => p.token.Alice!,
      () => p.token.Bob!,
      () => alice(),
      () => undash(alice()),
      () => undash(alice()).toUpperCase(),
      () => undash(bob()),
      () => 'not-a-uuid',
      () => r.pick(NAMES),
    ])();
  const text = (): string =>
    r.pick([
      () => '',
      () => r.pick([' ', '\t', '\u00a0', '   \n']),
      () => plain(40),
      () => plain(40),
      () => odd(),
      () => odd(),
      () => (r.chance(0.3) ? long() : odd()),
      known,
      () => chars(HEX, r.pick([32, 40, 64])),
      () => 'x'.repeat(r.pick([63, 64, 65, 100, 129, 1000])),
    ])();
  const value = (depth: number): unknown => {
    switch (r.int(depth > 0 ? 9 : 7)) {
      case 0:
        return null;
      case 1:
        return r.chance(0.5);
      case 2:
        return r.pick(NUMBERS);
      case 3:
      case 4:
        return text();
      case 5:
        return r.chance(0.5) ? [] : {};
      case 6:
        return known();
      case 7:
        // A long list now and then.
        return r.chance(0.1) ? Array.from({ length: 100 + r.int(3000) }, () => r.pick(NAMES)) : Array.from({ length: r.int(6) }, () => value(depth - 1));
      default: {
        const o = bare();
        for (let i = r.int(5); i > 0; i--) o[r.chance(0.2) ? r.pick(['__proto__', 'constructor', 'accessToken', 'usernames']) : plain(8)] = value(depth - 1);
        return o;
      }
    }
  };
  /** A field's value: mostly what the field might hold, else any text, else any JSON value. */
  const field = (plausible: () => string): unknown => (r.chance(0.6) ? plausible() : r.chance(0.7) ? text() : value(2));
  const token = (): string =>
    r.pick([() => p.token.Alice!, () => p.token.Bob!, () => 'x'.repeat(100), () => plain(36), () => p.token.Alice!.toUpperCase(), () => p.token.Alice! + odd()])();
  const profile = (): string =>
    r.pick([
      () => undash(alice()),
      () => undash(bob()),
      () => alice(),
      () => undash(alice()).toUpperCase(),
      () => 'not-a-uuid',
      () => chars(ALNUM, 32),
      () => chars(HEX, 32),
      () => undash(alice()).slice(0, r.int(32)),
      () => `{${alice()}}`,
    ])();
  const serverId = (): string => r.pick([() => `-${chars(HEX, 40)}`, () => chars(HEX, 40), () => 'x'.repeat(r.pick([41, 64, 65, 100])), () => plain(20)])();
  const contentType = (): string | undefined => (r.chance(0.75) ? 'application/json' : r.pick(CONTENT_TYPES));

  /** Bytes that are not JSON, or not UTF-8 (its reader makes U+FFFD of those, so some are JSON then). */
  const notJson = (): Buffer => {
    const valid = JSON.stringify({ accessToken: p.token.Alice, selectedProfile: undash(alice()), serverId: chars(HEX, 40) });
    const cut = r.int(valid.length);
    return r.pick([
      () => Buffer.from(valid.slice(0, cut)),
      () => Buffer.from(`accessToken=${p.token.Alice}&selectedProfile=${undash(alice())}&serverId=abc`),
      () => Buffer.from(`{'accessToken':'x','selectedProfile':'y','serverId':'z'}`),
      () => Buffer.from(valid.replace('"serverId"', 'serverId')),
      () => Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256))),
      () => Buffer.concat([Buffer.from(valid.slice(0, cut)), Buffer.from(r.pick([[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]])), Buffer.from(valid.slice(cut))]),
      () => Buffer.from(`\ufeff${valid}`),
      () => Buffer.from(r.pick(['NaN', 'undefined', '[1,]', '{"a":1}{"b":2}', ' ', '{', '"\\ud800', '['.repeat(5000)])),
    ])();
  };
  const noBody = (): Buffer | undefined => (r.chance(0.5) ? undefined : Buffer.alloc(0));
  /** Any JSON document but an object, and never null (see the file's opening comment). */
  const notObject = (): unknown => {
    const v = value(2);
    return v === null || (typeof v === 'object' && !Array.isArray(v)) ? [v] : v;
  };

  const join = (): Probe => {
    const k = r.int(20);
    let body: Buffer | undefined;
    if (k < 15) {
      const o = bare();
      if (!r.chance(0.05)) o.accessToken = field(token);
      if (!r.chance(0.05)) o.selectedProfile = field(profile);
      if (!r.chance(0.05)) o.serverId = field(serverId);
      if (r.chance(0.15)) o[r.pick(['__proto__', 'constructor', 'userUUID', 'serverID', plain(8)])] = value(2);
      body = json(o);
    } else if (k < 16) body = json(notObject());
    else if (k < 19) body = notJson();
    else body = noBody();
    return { route: 'join', method: 'POST', path: JOIN, contentType: contentType(), body };
  };
  /** A probe from `make` whose body is at most MAX_GENERATED_BODY (others are drawn again). */
  const bounded = (make: () => Probe) => (): Probe => {
    for (;;) {
      const probe = make();
      if ((probe.body?.length ?? 0) <= MAX_GENERATED_BODY) return probe;
    }
  };

  const name = (): unknown => (r.chance(0.4) ? r.pick(NAMES) : r.chance(0.5) ? text() : value(2));
  const lookup = (): Probe => {
    const k = r.int(20);
    let body: Buffer | undefined;
    if (k < 12) body = json(Array.from({ length: 1 + r.int(10) }, name));
    else if (k < 14) body = json(Array.from({ length: 11 + r.int(2000) }, () => (r.chance(0.5) ? r.pick(NAMES) : plain(16)))); // over its limit of 10
    else if (k < 15) body = json([]);
    else if (k < 16) body = json({ usernames: Array.from({ length: r.int(5) }, name) });
    else if (k < 17) body = json(r.chance(0.3) ? null : value(2));
    else if (k < 19) body = notJson();
    else body = noBody();
    return { route: 'profiles', method: 'POST', path: PROFILES, contentType: contentType(), body };
  };

  /** A query value percent-encoded byte by byte (encodeURIComponent throws on a lone surrogate), or raw odd escapes. */
  const queryValue = (): string =>
    r.chance(0.85)
      ? [...Buffer.from(r.chance(0.5) ? r.pick(NAMES) : r.chance(0.5) ? plain(20) : odd(), 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')
      : r.pick(['%zz', '%', '%ED%A0%80', '%00', '+', '%2B%2B', 'a&username=b']);
  const hasJoined = (): Probe => {
    const parts = r.pick([
      () => [`username=${queryValue()}`, `serverId=${queryValue()}`],
      () => [`username=${queryValue()}`],
      () => [`serverId=${queryValue()}`, `username=${queryValue()}`, `username=${queryValue()}`],
      () => [`username=Alice`, `serverId=${chars(HEX, 40)}`],
    ])();
    return get('hasJoined', `${HAS_JOINED}?${parts.join('&')}`);
  };
  const profileGet = (): Probe => {
    const id = r.pick([() => undash(alice()), () => undash(bob()).toUpperCase(), () => chars(ALNUM, 32), () => chars(HEX, 32), () => chars(HEX, r.pick([31, 33]))])();
    return get('profile', `${PROFILE}/${id}${r.pick(['', '?unsigned=true', '?unsigned=false', '?unsigned=x'])}`);
  };

  return { join: bounded(join), lookup: bounded(lookup), hasJoined, profileGet };
}

/** The generated requests of one run, in a seeded order. */
function generate(seed: number, players: Players): Probe[] {
  const r = seededRandom(seed);
  const g = generators(r, players);
  const probes = [
    ...Array.from({ length: JOINS }, g.join),
    ...Array.from({ length: LOOKUPS }, g.lookup),
    ...Array.from({ length: GETS / 2 }, g.hasJoined),
    ...Array.from({ length: GETS / 2 }, g.profileGet),
  ];
  return r.shuffle(probes);
}

/** Sends every probe, IN_FLIGHT at a time, handing each answer to `check`; stops at the first failure. */
async function sendAll(ls: RunningLauncherServer, probes: Probe[], check: (probe: Probe, answer: Answer, what: string) => void): Promise<void> {
  const started = performance.now();
  let next = 0;
  let failure: unknown;
  /** Sent and not answered yet: when the LauncherServer ends, any of them may be the cause. */
  const inFlight = new Map<number, string>();
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < probes.length) {
      const i = next++;
      const probe = probes[i]!;
      const what = `generated request #${i} (${probe.route}, seed ${seedHex(SEED)})`;
      try {
        if (performance.now() - started > RUN_LIMIT_MS) assert.fail(`the run took over ${RUN_LIMIT_MS} ms; it was at ${what}`);
        inFlight.set(i, `#${i} ${describeProbe(probe)}`);
        const answer = await sendTo(ls, probe, what);
        inFlight.delete(i);
        check(probe, answer, `${what}: ${describeProbe(probe)}`);
      } catch (err) {
        if (failure === undefined && !ls.running() && err instanceof Error) {
          err.message += `\nrequests in flight when it ended (one of them ended it):\n${[...inFlight.values()].join('\n')}`;
        }
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  if (failure !== undefined) throw failure;
}

// ---------------------------------------------------------------------------------------------

for (const gen of GENERATIONS) {
  describe(`LauncherServer ${gen.name} in front of the server`, { skip: missingGeneration(gen) }, () => {
    let tmp: ReturnType<typeof tempDir> | undefined;
    let backend: Listening;
    let ls: RunningLauncherServer;
    const players: Players = { uuid: {}, token: {} };

    before(async () => {
      tmp = tempDir();
      const db = pathJoin(tmp.dir, 'launcherserver.db');
      const [alice, bob] = await Promise.all([seedPlayer(db, 'Alice', PW), seedPlayer(db, 'Bob', PW)]);
      players.uuid = { Alice: alice, Bob: bob };
      backend = await spawnListening([...serverCommand(), 'serve', '--port', '0', '--db', db]);
      for (const name of ['Alice', 'Bob']) {
        players.token[name] = assertOk(await postTo('127.0.0.1', backend.port, '/auth', { login: name, password: PW })).accessToken;
      }
      ls = await startLauncherServer(gen, `http://127.0.0.1:${backend.port}`);
    });

    after(async () => {
      await ls?.stop();
      await backend?.stop();
      tmp?.cleanup();
    });

    // Rule: README.md tells an owner which config block to use by the version the LauncherServer
    // prints; the block it names for this one puts skinDomains where this one reads it.
    test('the README\'s block for the version it prints lists skinDomains where it reads them', async () => {
      const version = /AuroraLauncher LauncherServer (v\S+)/.exec(ls.output())?.[1];
      assert.ok(version, `the version it prints:\n${ls.output().slice(0, 500)}`);
      const readme = readFileSync(pathJoin(ROOT, 'README.md'), 'utf8');
      const section = readme.slice(readme.indexOf('## Pointing a LauncherServer at it'), readme.indexOf('## Other launchers'));
      const named = section.split(/^\*\*/m).find((part) => part.includes(`\`${version}\``));
      assert.ok(named, `the README names ${version}`);
      const block = /```\n([\s\S]*?)```/.exec(named)?.[1] ?? '';
      assert.match(block, /^api: \{[\s\S]*^  injector: \{\n    skinDomains: \[/m, `the block for ${version} puts skinDomains under api.injector`);
      const metadata = await fetchReply(`${ls.url}/authlib`);
      assert.deepEqual(JSON.parse(metadata.text).skinDomains, [LISTED_SKIN_DOMAIN], 'as this generation reads them there');
    });

    /** A join (an object, or the bytes to send): the LauncherServer says "Invalid credentials.", and this service answered it with a 200. */
    async function hostileJoin(body: unknown, what: string): Promise<void> {
      const before = logged(backend.stdout(), '/join').length;
      const probe = Buffer.isBuffer(body) ? { ...postJson('join', JOIN, null), body } : postJson('join', JOIN, body);
      const a = await sendTo(ls, probe, what);
      assert.equal(joinOutcome(a, what), 'false', `${what}: ${a.status} ${a.text}`);
      const lines = await loggedUntil(backend, '/join', before + 1);
      assert.equal(lines.length, before + 1);
      assert.equal(lines.at(-1)!.status, 200, `${what}: this service's answer`);
    }

    test('the requests from the issue, and joins as large as it passes on: refused in-band, and it lives on', async () => {
      const serverId = '-4f1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d';
      await hostileJoin({ accessToken: players.token.Alice, selectedProfile: 'not-a-uuid', serverId }, 'the join with selectedProfile "not-a-uuid"');
      await hostileJoin({ accessToken: 'a'.repeat(100), selectedProfile: undash(players.uuid.Alice!), serverId }, 'the join with a 100-character accessToken');
      // It passes on any body under its own limit of 100 KB: this service must read such a body too,
      await hostileJoin({ accessToken: players.token.Alice, selectedProfile: undash(players.uuid.Alice!), serverId: 'f'.repeat(90_000) }, 'a join of 90 KB');
      // and what it makes of one: each byte that is not UTF-8 becomes U+FFFD, 3 bytes, so 95 KB become about 285 KB.
      const notUtf8 = Buffer.concat([Buffer.from('{"accessToken":"'), Buffer.alloc(95_000, 0xff), Buffer.from(`","selectedProfile":"${undash(players.uuid.Alice!)}","serverId":"${serverId}"}`)]);
      await hostileJoin(notUtf8, 'a join of 95 KB that are not UTF-8');

      const before = logged(backend.stdout(), '/profiles').length;
      const a = await sendTo(ls, postJson('profiles', PROFILES, [1]), 'the profiles look-up of [1]');
      if (gen.routesProfiles) {
        assert.equal(a.status, 200, a.text);
        assert.deepEqual(a.json, [], 'a number is no name: not found');
        const lines = await loggedUntil(backend, '/profiles', before + 1);
        assert.equal(lines.at(-1)!.status, 200);
      } else {
        // 0.0.4 serves no bulk look-up: a 404 of its own, and nothing reaches this service.
        assert.equal(a.status, 404, a.text);
        await settledLog(backend);
        assert.equal(logged(backend.stdout(), '/profiles').length, before);
      }
      assert.ok(ls.running(), 'the LauncherServer is still running');
    });

    test('a burst of joins over --max-connections: each one answered in-band, none closed without a word, and it lives on', async () => {
      // Its HTTP client opens a connection a join in flight, with no limit of its own: 60 joins at
      // once against a cap of 4. Node's own cap would close the rest without an answer.
      const own = tempDir();
      const db = pathJoin(own.dir, 'burst.db');
      await seedPlayer(db, 'Alice', PW);
      const capped = await spawnListening([...serverCommand(), 'serve', '--port', '0', '--db', db, '--max-connections', '4']);
      const front = await startLauncherServer(gen, `http://127.0.0.1:${capped.port}`);
      try {
        const body = { accessToken: 'b'.repeat(32), selectedProfile: undash(players.uuid.Alice!), serverId: '-5a6b7c8d9e0f' };
        const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => sendTo(front, postJson('join', JOIN, body), `join ${i + 1} of the burst`)));
        for (const [i, a] of answers.entries()) assert.equal(joinOutcome(a, `join ${i + 1}`), 'false');
        const lines = await loggedUntil(capped, '/join', 60);
        assert.ok(lines.every((l) => l.status === 200), 'every join answered 200');
        assert.ok(lines.some((l) => l.reason === 'connections'), 'some joins were over the cap (logged with the reason connections), and answered in-band');
        assert.ok(front.running(), 'the LauncherServer is still running');
      } finally {
        await front.stop();
        await capped.stop();
        own.cleanup();
      }
    });

    test(`${JOINS + LOOKUPS + GETS} generated requests (seed ${seedHex(SEED)}): every answer its own, every join and look-up passed on answered in-band`, async (t) => {
      const joinsBefore = logged(backend.stdout(), '/join').length;
      const lookupsBefore = logged(backend.stdout(), '/profiles').length;
      const joins = { true: 0, false: 0, 'not asked': 0 };
      const lookups = { asked: 0, 'not asked': 0 };
      await sendAll(ls, generate(SEED, players), (probe, answer, what) => {
        if (probe.route === 'join') joins[joinOutcome(answer, what)]++;
        else if (probe.route === 'profiles') lookups[lookupOutcome(gen, players, answer, what)]++;
        else checkGet(probe, answer, what);
      });
      t.diagnostic(`joins: ${joins.true} joined, ${joins.false} refused by this service, ${joins['not asked']} refused by the LauncherServer itself`);
      t.diagnostic(`profiles look-ups: ${lookups.asked} answered by this service, ${lookups['not asked']} refused by the LauncherServer itself`);
      // The run reached this service both ways, and the LauncherServer refused some itself.
      assert.ok(joins.true > 0 && joins.false > 0 && joins['not asked'] > 0, JSON.stringify(joins));
      if (gen.routesProfiles) assert.ok(lookups.asked > 0 && lookups['not asked'] > 0, JSON.stringify(lookups));

      assert.ok(ls.running(), 'the LauncherServer is still running');
      assert.equal((await fetchReply(`${ls.url}/authlib`)).status, 200);

      // This service's side: each join passed on was answered with a 200, its result as the LauncherServer showed it.
      const asked = joins.true + joins.false;
      await loggedUntil(backend, '/join', joinsBefore + asked);
      await loggedUntil(backend, '/profiles', lookupsBefore + lookups.asked);
      await settledLog(backend);
      const joinLines = logged(backend.stdout(), '/join').slice(joinsBefore);
      assert.equal(joinLines.length, asked, 'joins that reached this service');
      assert.deepEqual(joinLines.filter((l) => l.status !== 200), [], 'joins answered out of band');
      assert.equal(joinLines.filter((l) => l.outcome === 'ok').length, joins.true, 'joins recorded');
      const lookupLines = logged(backend.stdout(), '/profiles').slice(lookupsBefore);
      assert.equal(lookupLines.length, lookups.asked, 'look-ups that reached this service');
      assert.deepEqual(lookupLines.filter((l) => l.status !== 200), [], 'look-ups answered out of band');
    });

    test("afterwards a player logs in over its websocket with the launcher's own client, joins through it and is seen by hasJoined", async () => {
      assert.ok(ls.running(), 'the LauncherServer is still running');
      const { AuroraAPI } = createRequire(import.meta.url)(sharedFile(gen.client));
      const api = new AuroraAPI(`ws://127.0.0.1:${ls.port}/ws`);
      await api.connect();
      let session: any;
      try {
        if (gen.verifies) {
          // The launcher proves it knows the server's public key: it decrypts the server's token and sends it back encrypted.
          const key = publicKeyOf(ls);
          const { token } = await api.verify(1);
          const secret = publicDecrypt(key, Buffer.from(token, 'hex'));
          await api.verify(2, publicEncrypt(key, secret).toString('hex'));
        }
        session = await api.auth('alice', PW);
      } finally {
        api.close();
      }
      assert.equal(session.username, 'Alice', 'the name as registered');
      assert.equal(session.userUUID, players.uuid.Alice);

      const serverId = '-7c1d9e0f2a3b4c5d6e7f8091a2b3c4d5e6f7081';
      const before = logged(backend.stdout(), '/join').length;
      const joined = await sendTo(ls, postJson('join', JOIN, { accessToken: session.accessToken, selectedProfile: undash(session.userUUID), serverId }), 'the real join');
      assert.equal(joinOutcome(joined, 'the real join'), 'true');
      const lines = await loggedUntil(backend, '/join', before + 1);
      assert.deepEqual([lines.at(-1)!.status, lines.at(-1)!.outcome], [200, 'ok']);

      const seen = await sendTo(ls, get('hasJoined', `${HAS_JOINED}?username=Alice&serverId=${serverId}`), 'the real hasJoined');
      assert.equal(seen.status, 200, seen.text);
      assert.equal(undash(seen.json.id), undash(players.uuid.Alice!));
      assert.equal(seen.json.name, 'Alice');
      assert.equal(seen.json.properties?.[0]?.name, 'textures', 'its textures property, signed by the LauncherServer');

      const profile = await sendTo(ls, get('profile', `${PROFILE}/${undash(players.uuid.Alice!)}`), 'the profile look-up');
      assert.equal(profile.status, 200, profile.text);
      assert.equal(profile.json.name, 'Alice');
      if (gen.routesProfiles) {
        const found = await sendTo(ls, postJson('profiles', PROFILES, ['alice', 'BOB', 'Nobody_Here']), 'the profiles look-up');
        assert.equal(found.status, 200, found.text);
        assert.deepEqual(found.json, [
          { id: players.uuid.Alice, name: 'Alice' },
          { id: players.uuid.Bob, name: 'Bob' },
        ]);
      }
      assert.ok(ls.running(), 'the LauncherServer is still running');
    });
  });
}
