// --config FILE in process: reading and checking the file (readConfigFile), how its values rank
// against flags, the environment and the defaults (resolveServeConfig, resolveDb), secrets
// masked for --print-config (maskSecrets), and the program's answers to a file (main).
// test/e2e/config.test.ts runs the same through the built server.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { readConfigFile } from '../../src/cli/config-file.ts';
import { main } from '../../src/cli/main.ts';
import { maskSecrets, resolveDb, resolveServeConfig, SERVE_OPTIONS, type ConfigFile, type ServeConfig } from '../../src/cli/options.ts';
import { UsageError } from '../../src/cli/usage.ts';
import { tempDir } from '../helpers/process.ts';

const { dir, cleanup } = tempDir();
after(cleanup);

let files = 0;
/** Writes `content` (JSON-encoded unless it is already text) to a new file and returns its path. */
function configPath(content: unknown): string {
  const path = join(dir, `config-${++files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** A config file as readConfigFile reads it. */
const config = (content: unknown): ConfigFile => readConfigFile(configPath(content));

const API_KEY = 'file-api-key-0123456789';
const ADMIN_TOKEN = 'file-admin-token-0123456789';

/** A value for every option, none of them its default, each in the JSON type the file wants. */
const EVERY_KEY: ServeConfig = {
  host: '0.0.0.0',
  port: 9999,
  db: '/srv/mcauth/players.db',
  basePath: '/mc',
  variant: 'base',
  joinTtl: 60,
  tokenTtl: 3600,
  maxProfiles: 50,
  apiKey: API_KEY,
  addressLoginLimit: 5,
  synchronous: 'full',
  publicUrl: 'https://auth.example.org/',
  hdTextures: true,
  adminToken: ADMIN_TOKEN,
  hashConcurrency: 2,
  hashQueue: 8,
  headersTimeout: 5,
  requestTimeout: 20,
  keepAliveTimeout: 3,
  maxConnections: 10,
  maxConnectionsPerAddress: 8,
  metrics: true,
  logLevel: 'debug',
  shutdownTimeout: 7,
  workers: 3,
  logFormat: 'pretty',
  minPasswordLength: 12,
  allowHttpTextures: true,
  trustProxy: '10.0.0.0/8,2001:db8::/32',
  relay: '192.0.2.7',
  accountPage: true,
  admins: 'Boss,Helper',
  serverName: 'Craftland',
  registration: 'invite',
  registrationUuid: 'offline',
  registrationsPerAddress: 3,
  registrationsPerHour: 30,
  resetTtl: 600,
  yggdrasil: true,
  yggdrasilKey: '/etc/mcauth/yggdrasil.pem',
};

describe('readConfigFile', () => {
  // Rule: the file is one JSON object; it is returned as it is, with its path for messages.
  test('returns the object and the path', () => {
    const path = configPath({ port: 0, basePath: '/mc', hdTextures: true });
    assert.deepEqual(readConfigFile(path), { path, values: { port: 0, basePath: '/mc', hdTextures: true } });
    assert.deepEqual(readConfigFile(configPath('{}')).values, {});
  });

  // Rule: keys are the options' camelCase names; any other key is refused, and named.
  test('refuses an unknown key and names it', () => {
    for (const key of ['joinTTL', 'join-ttl', 'join_ttl', 'MCAUTH_PORT', 'config', 'printConfig', 'help', 'listenPort', '__proto__', 'constructor', '']) {
      const path = configPath(`{"port": 0, ${JSON.stringify(key)}: 1}`);
      assert.throws(
        () => readConfigFile(path),
        (err: Error) => err instanceof UsageError && err.message.includes(`unknown key "${key}"`) && err.message.includes(path),
        `key ${JSON.stringify(key)}`,
      );
    }
  });

  // Rule: an unknown key that is a known one written in another case or with dashes or underscores is answered with that key.
  test('an unknown key that is a known one spelt otherwise gets "did you mean"', () => {
    for (const [key, meant] of [['public-url', 'publicUrl'], ['PUBLIC_URL', 'publicUrl'], ['joinTTL', 'joinTtl'], ['join_ttl', 'joinTtl'], ['Max-Connections-Per-Address', 'maxConnectionsPerAddress']]) {
      const path = configPath(`{"port": 0, ${JSON.stringify(key)}: 1}`);
      assert.throws(() => readConfigFile(path), { name: 'UsageError', message: `${path}: unknown key "${key}" (did you mean "${meant}"?)` }, key);
    }
    const path = configPath('{"listenPort": 1}');
    assert.throws(() => readConfigFile(path), { message: `${path}: unknown key "listenPort" (keys are the options' names in camelCase, such as joinTtl)` });
  });

  // Rule: the file must hold one JSON object, not another JSON value.
  test('refuses a file that is not one object', () => {
    for (const text of ['[]', '[{"port": 0}]', 'null', '42', '"port"', 'true']) {
      const path = configPath(text);
      assert.throws(() => readConfigFile(path), { name: 'UsageError', message: `the config file "${path}" must hold one JSON object` }, text);
    }
  });

  // Rule: a file that is not JSON is refused as such (a usage error), naming the file.
  test('refuses invalid JSON', () => {
    for (const text of ['', '{port: 0}', '{"port": 0,}', "{'port': 0}", '{"port": 0} {"port": 1}', '{"port": 0', '// c\n{}']) {
      const path = configPath(text);
      assert.throws(
        () => readConfigFile(path),
        (err: Error) => err instanceof UsageError && new RegExp(`^the config file "${path}" is not valid JSON( \\(at line \\d+\\))?$`).test(err.message),
        JSON.stringify(text),
      );
    }
  });

  // Rule: the file is strict JSON, as request bodies are: a key given twice is refused, not
  // silently settled by its last value.
  test('refuses a key given twice, naming it', () => {
    const path = configPath('{"port": 1, "port": 70000}');
    assert.throws(() => readConfigFile(path), { name: 'UsageError', message: `the config file "${path}" has the key "port" twice` });
  });

  // Rule: a syntax error is reported by line, never by quoting the text: it may be a secret.
  test('a syntax error names the line, and no part of the text around it', () => {
    const secret = 's3cretKEYs3cretKEY';
    const path = configPath(`{\n  "port": 8080,\n  "adminToken": '${secret}'\n}`);
    assert.throws(() => readConfigFile(path), (err: Error) => {
      assert.ok(!err.message.includes('s3cret') && !err.message.includes('KEY'), err.message);
      assert.equal(err.message.replace(' (at line 3)', ''), `the config file "${path}" is not valid JSON`);
      return true;
    });
    // Where the runtime gives a position, the line is named.
    const trailing = configPath('{\n  "port": 8080,\n}');
    assert.throws(() => readConfigFile(trailing), { message: `the config file "${trailing}" is not valid JSON (at line 3)` });
  });

  // Rule: a byte-order mark (which some editors write) is no part of the JSON.
  test('takes a file that starts with a byte-order mark', () => {
    assert.deepEqual(readConfigFile(configPath('\uFEFF{"port": 9000}')).values, { port: 9000 });
  });

  // Rule: a file that cannot be read is a failure naming the file (exit 1, not a usage error).
  test('says which file it cannot read', () => {
    const missing = join(dir, 'no-such-config.json');
    assert.throws(
      () => readConfigFile(missing),
      (err: Error) => !(err instanceof UsageError) && err.message.startsWith(`cannot read the config file "${missing}": `) && /ENOENT/.test(err.message),
    );
    const folder = join(dir, 'a-folder.json');
    mkdirSync(folder);
    assert.throws(() => readConfigFile(folder), (err: Error) => !(err instanceof UsageError) && /EISDIR/.test(err.message));
  });
});

describe('resolveServeConfig with a file', () => {
  const defaults = resolveServeConfig({}, {});

  // Rule: every option can be set in the file under its camelCase name, in its JSON type.
  test('every option is read from its camelCase key', () => {
    assert.deepEqual(Object.keys(EVERY_KEY).sort(), SERVE_OPTIONS.map((o) => o.key).sort(), 'EVERY_KEY names every option');
    const resolved = resolveServeConfig({}, {}, config(EVERY_KEY));
    assert.deepEqual(resolved, { ...EVERY_KEY, publicUrl: 'https://auth.example.org' });
    for (const key of Object.keys(EVERY_KEY) as (keyof ServeConfig)[]) assert.notEqual(resolved[key], defaults[key], `${key} differs from its default`);
  });

  // Rule: an empty file, or a key left out, gives the default.
  test('a key left out keeps its default', () => {
    assert.deepEqual(resolveServeConfig({}, {}, config({})), defaults);
    assert.deepEqual(resolveServeConfig({}, {}, config({ joinTtl: 45 })), { ...defaults, joinTtl: 45 });
  });

  // Rule: a flag wins over the environment, which wins over the file, which wins over the default.
  test('precedence: flag, then environment, then file, then default', () => {
    const file = config({ basePath: '/file', joinTtl: 40, variant: 'base', hdTextures: true, host: '127.0.0.2' });
    const env = { MCAUTH_BASE_PATH: '/env', MCAUTH_JOIN_TTL: '50', MCAUTH_HD_TEXTURES: 'false' };
    const flags = { 'base-path': '/flag', 'join-ttl': '60', 'hd-textures': true };

    const fromFile = resolveServeConfig({}, {}, file);
    assert.deepEqual([fromFile.basePath, fromFile.joinTtl, fromFile.variant, fromFile.hdTextures, fromFile.host], ['/file', 40, 'base', true, '127.0.0.2']);
    assert.equal(fromFile.maxProfiles, defaults.maxProfiles, 'not in the file: the default');

    const fromEnv = resolveServeConfig({}, env, file);
    assert.deepEqual([fromEnv.basePath, fromEnv.joinTtl, fromEnv.variant, fromEnv.hdTextures, fromEnv.host], ['/env', 50, 'base', false, '127.0.0.2']);

    const fromFlags = resolveServeConfig(flags, env, file);
    assert.deepEqual([fromFlags.basePath, fromFlags.joinTtl, fromFlags.variant, fromFlags.hdTextures, fromFlags.host], ['/flag', 60, 'base', true, '127.0.0.2']);

    // An empty environment variable is a value (it wins over the file), not an absence.
    assert.equal(resolveServeConfig({}, { MCAUTH_BASE_PATH: '' }, file).basePath, '');
  });

  // Rule: the environment's value is the one checked when it wins; the file does not rescue it.
  // Rule: an empty secret variable (a blank line in an environment file) is no value: it must
  // not switch off the key the file sets. Other empty variables are values.
  test('an empty MCAUTH_API_KEY or MCAUTH_ADMIN_TOKEN leaves the file\'s secret in force', () => {
    const file = config({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });
    const settings = resolveServeConfig({}, { MCAUTH_API_KEY: '', MCAUTH_ADMIN_TOKEN: '' }, file);
    assert.deepEqual([settings.apiKey, settings.adminToken], [API_KEY, ADMIN_TOKEN]);
  });

  // Rule: the file must be right on its own: a bad value in it is refused even where a flag or
  // the environment overrides it (else it would break the day the override goes).
  test('an invalid file value is refused also when a flag or the environment overrides it', () => {
    const file = config({ port: 'x', hdTextures: 'maybe' });
    assert.throws(() => resolveServeConfig({ port: '1', 'hd-textures': true }, {}, file), { name: 'UsageError', message: `${file.path}: "port" must be a JSON whole number` });
    const range = config({ port: 70000 });
    assert.throws(() => resolveServeConfig({}, { MCAUTH_PORT: '1' }, range), { name: 'UsageError', message: `${range.path}: "port" must be a whole number from 0 to 65535, got "70000"` });
  });

  test('a winning environment value is checked, whatever the file says', () => {
    assert.throws(() => resolveServeConfig({}, { MCAUTH_JOIN_TTL: 'soon' }, config({ joinTtl: 30 })), { name: 'UsageError', message: /^MCAUTH_JOIN_TTL must be a whole number/ });
  });

  // Rule: an invalid value in the file is refused with the file and the key named.
  test('invalid values are refused naming the key', () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ port: 70000 }, 'port', /must be a whole number from 0 to 65535, got "70000"/],
      [{ port: -1 }, 'port', /must be a whole number/],
      [{ joinTtl: 0 }, 'joinTtl', /must be a whole number from 1 to/],
      [{ tokenTtl: 1e21 }, 'tokenTtl', /must be a whole number/],
      [{ variant: 'full' }, 'variant', /must be base or extended, got "full"/],
      [{ synchronous: 'off' }, 'synchronous', /must be normal or full/],
      [{ logLevel: 'loud' }, 'logLevel', /must be/],
      [{ host: '' }, 'host', /must not be empty/],
      [{ db: '' }, 'db', /must not be empty/],
      [{ publicUrl: 'ftp://auth.example.org' }, 'publicUrl', /must be an http:\/\/ or https:\/\/ address/],
      [{ hashConcurrency: 65 }, 'hashConcurrency', /from 1 to 64/],
    ];
    for (const [values, key, reason] of cases) {
      const file = config(values);
      assert.throws(
        () => resolveServeConfig({}, {}, file),
        (err: Error) => err instanceof UsageError && err.message.startsWith(`${file.path}: "${key}" `) && reason.test(err.message),
        JSON.stringify(values),
      );
    }
  });

  // Rule: a refused secret is named but never echoed (it may be most of the real one).
  test('an invalid secret is named, not shown', () => {
    for (const [key, value] of [
      ['apiKey', 'short-secret'],
      ['apiKey', 'long+enough&but%not-url-safe'],
      ['adminToken', 'has spaces in this secret'],
    ] as const) {
      const file = config({ [key]: value });
      assert.throws(
        () => resolveServeConfig({}, {}, file),
        (err: Error) => err instanceof UsageError && err.message.startsWith(`${file.path}: "${key}" must be`) && !err.message.includes(value),
        key,
      );
    }
  });

  // Rule: the checks across options hold for values from the file too.
  test('cross-option checks apply to file values', () => {
    assert.throws(() => resolveServeConfig({}, {}, config({ headersTimeout: 40, requestTimeout: 30 })), { message: '--headers-timeout must not be longer than --request-timeout' });
    assert.throws(() => resolveServeConfig({}, {}, config({ apiKey: API_KEY, adminToken: API_KEY })), { message: '--admin-token must differ from --api-key' });
    // The environment can settle it: MCAUTH_REQUEST_TIMEOUT wins over the file's.
    assert.equal(resolveServeConfig({}, { MCAUTH_REQUEST_TIMEOUT: '60' }, config({ headersTimeout: 40, requestTimeout: 30 })).requestTimeout, 60);
  });

  // Rule: booleans are JSON booleans, whole-number options JSON numbers, the rest strings;
  // another JSON type is refused naming the key (not coerced).
  test('a wrong JSON type is refused naming the key', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ port: '8080' }, 'port', 'whole number'],
      [{ port: 8080.5 }, 'port', 'whole number'],
      [{ joinTtl: true }, 'joinTtl', 'whole number'],
      [{ maxConnections: [10] }, 'maxConnections', 'whole number'],
      [{ hashQueue: null }, 'hashQueue', 'whole number'],
      [{ hdTextures: 'true' }, 'hdTextures', 'boolean'],
      [{ hdTextures: 1 }, 'hdTextures', 'boolean'],
      [{ metrics: 0 }, 'metrics', 'boolean'],
      [{ metrics: null }, 'metrics', 'boolean'],
      [{ host: 127 }, 'host', 'string'],
      [{ basePath: null }, 'basePath', 'string'],
      [{ variant: ['base'] }, 'variant', 'string'],
      [{ apiKey: { key: API_KEY } }, 'apiKey', 'string'],
      [{ db: false }, 'db', 'string'],
    ];
    for (const [values, key, type] of cases) {
      const file = config(values);
      assert.throws(() => resolveServeConfig({}, {}, file), { name: 'UsageError', message: `${file.path}: "${key}" must be a JSON ${type}` }, JSON.stringify(values));
    }
    // A whole number written with an exponent or a fraction of zero is still that number.
    assert.equal(resolveServeConfig({}, {}, config('{"port": 8.08e3}')).port, 8080);
    assert.equal(resolveServeConfig({}, {}, config('{"port": 8080.0}')).port, 8080);
  });
});

describe('resolveDb with a file', () => {
  // Rule: user commands and backup take their db from --db, else MCAUTH_DB, else the file, else the default.
  test('precedence: --db, then MCAUTH_DB, then the file, then mcauth.db', () => {
    const file = config({ db: '/from/file.db', port: 70000 });
    assert.equal(resolveDb(undefined, {}, file), '/from/file.db', 'the file; its other keys are the server\'s business');
    assert.equal(resolveDb(undefined, { MCAUTH_DB: '/from/env.db' }, file), '/from/env.db');
    assert.equal(resolveDb('/from/flag.db', { MCAUTH_DB: '/from/env.db' }, file), '/from/flag.db');
    assert.equal(resolveDb(undefined, {}, config({ port: 0 })), 'mcauth.db');
    assert.equal(resolveDb(undefined, {}), 'mcauth.db');
  });

  // Rule: the file's db is checked: its JSON type, and that it is a file (not :memory:).
  test('refuses a db of the wrong type, or :memory:, from the file', () => {
    const numeric = config({ db: 5 });
    assert.throws(() => resolveDb(undefined, {}, numeric), { name: 'UsageError', message: `${numeric.path}: "db" must be a JSON string` });
    assert.throws(() => resolveDb(undefined, {}, config({ db: ':memory:' })), { name: 'UsageError', message: /:memory: is gone when the command ends/ });
    const empty = config({ db: '' });
    assert.throws(() => resolveDb(undefined, {}, empty), { name: 'UsageError', message: `${empty.path}: "db" must not be empty` });
    assert.throws(() => resolveDb(undefined, { MCAUTH_DB: '' }), { name: 'UsageError', message: 'MCAUTH_DB must not be empty' });
  });
});

describe('maskSecrets', () => {
  // Rule: --print-config shows every secret that is set as ********, and everything else as it is.
  test('masks the API key and the admin token when set, and only them', () => {
    const settings = resolveServeConfig({}, {}, config(EVERY_KEY));
    const shown = maskSecrets(settings);
    assert.deepEqual(shown, { ...settings, apiKey: '********', adminToken: '********' });
    assert.equal(settings.apiKey, API_KEY, 'the settings themselves are left as they were');
    assert.ok(!JSON.stringify(shown).includes(API_KEY) && !JSON.stringify(shown).includes(ADMIN_TOKEN));
  });

  // Rule: an unset secret shows as unset ('' ), so --print-config tells "none" from "set".
  test('leaves unset secrets empty', () => {
    const settings = resolveServeConfig({}, {});
    assert.deepEqual(maskSecrets(settings), settings);
    assert.deepEqual(maskSecrets({ ...settings, adminToken: ADMIN_TOKEN }), { ...settings, adminToken: '********' });
  });

  // Rule: the secret options are exactly the API key and the admin token (a new secret must be added here on purpose).
  test('the secret options are apiKey and adminToken', () => {
    assert.deepEqual(SERVE_OPTIONS.filter((o) => o.secret).map((o) => o.key).sort(), ['adminToken', 'apiKey']);
  });
});

describe('main with --config', () => {
  async function run(argv: string[], env: Record<string, string> = {}, stdin = '') {
    let stdout = '';
    let stderr = '';
    const sink = (append: (s: string) => void) => new Writable({ write: (chunk, _enc, next) => (append(String(chunk)), next()) });
    const code = await main(argv, { stdin: Readable.from([stdin]), stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), env });
    return { code, stdout, stderr };
  }

  // Rule: --print-config prints the effective settings as JSON, secrets masked, and exits 0.
  test('--print-config prints the settings in effect, secrets masked', async () => {
    const path = configPath({ ...EVERY_KEY, port: 0 });
    const r = await run(['--config', path, '--print-config'], { MCAUTH_JOIN_TTL: '77' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const printed = JSON.parse(r.stdout);
    assert.deepEqual(printed, maskSecrets(resolveServeConfig({}, { MCAUTH_JOIN_TTL: '77' }, readConfigFile(path))));
    assert.equal(printed.joinTtl, 77, 'the environment over the file');
    assert.equal(printed.basePath, '/mc', 'the file over the default');
    assert.equal(printed.apiKey, '********');
    assert.equal(printed.adminToken, '********');
    assert.ok(!r.stdout.includes(API_KEY) && !r.stdout.includes(ADMIN_TOKEN), 'no secret on stdout');
    // `serve --print-config` says the same.
    assert.deepEqual(await run(['serve', '--print-config', '--config', path], { MCAUTH_JOIN_TTL: '77' }), r);
  });

  // Rule: secrets from the environment or a flag are masked too, not only the file's.
  test('--print-config masks secrets from flags and the environment', async () => {
    const r = await run(['--print-config', '--api-key', API_KEY], { MCAUTH_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).apiKey, '********');
    assert.equal(JSON.parse(r.stdout).adminToken, '********');
    assert.ok(!r.stdout.includes(API_KEY) && !r.stdout.includes(ADMIN_TOKEN));
  });

  // Rule: --print-config only prints: it opens no database and starts no server.
  test('--print-config opens no database', async () => {
    const db = join(dir, 'not-created', 'print.db');
    const r = await run(['--print-config', '--config', configPath({ db })]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).db, db);
    assert.equal(existsSync(join(dir, 'not-created')), false);
  });

  // Rule: MCAUTH_CONFIG names the file when --config is not given; --config wins over it.
  test('MCAUTH_CONFIG names the file; --config wins', async () => {
    const good = configPath({ basePath: '/from-env-file' });
    const r = await run(['--print-config'], { MCAUTH_CONFIG: good });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).basePath, '/from-env-file');
    const bad = configPath({ bogus: 1 });
    const flagged = await run(['--print-config', '--config', good], { MCAUTH_CONFIG: bad });
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.equal(JSON.parse(flagged.stdout).basePath, '/from-env-file');
  });

  // Rule: an unknown key, an invalid value, a wrong type or invalid JSON is a malformed start:
  // exit 2 with the file and key named; an unreadable file exits 1 naming the file.
  test('refusals exit 2 naming the key, 1 for an unreadable file', async () => {
    // [content, message, refused by user commands too (they read the whole file but use only its db)]
    const cases: [unknown, string, boolean][] = [
      [{ port: 0, bogusKey: true }, 'unknown key "bogusKey"', true],
      [{ port: 70000 }, '"port" must be a whole number from 0 to 65535, got "70000"', false],
      [{ port: '8080' }, '"port" must be a JSON whole number', false],
      [{ hdTextures: 'yes' }, '"hdTextures" must be a JSON boolean', false],
      ['{"port": 0,}', 'is not valid JSON', true],
      ['[1]', 'must hold one JSON object', true],
    ];
    for (const [content, message, byUser] of cases) {
      const path = configPath(content);
      const commands = [['--config', path], ['serve', '--config', path, '--print-config'], ...(byUser ? [['user', 'list', '--config', path]] : [])];
      for (const argv of commands) {
        const r = await run(argv);
        assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.ok(r.stderr.includes(message) && r.stderr.includes(path) && r.stderr.endsWith('(see --help)\n'), r.stderr);
      }
    }
    const missing = join(dir, 'missing.json');
    const r = await run(['--config', missing]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.startsWith(`mcauth: cannot read the config file "${missing}"`), r.stderr);
    assert.equal((await run(['--print-config'], { MCAUTH_CONFIG: missing })).code, 1);
  });

  // Rule: user commands and backup take the db from --config (or MCAUTH_CONFIG); --db wins.
  test('user commands and backup use the file\'s db', async () => {
    const db = join(dir, 'from-config.db');
    const path = configPath({ db, port: 0 });
    assert.match((await run(['user', 'add', 'Alice', '--config', path], {}, 'open-sesame\n')).stdout, /^Added Alice /);
    assert.ok(existsSync(db), 'the file\'s db was created');
    assert.match((await run(['user', 'list', '--config', path])).stdout, /^Alice {2}/);
    assert.match((await run(['user', 'list'], { MCAUTH_CONFIG: path })).stdout, /^Alice {2}/);
    assert.match((await run(['user', 'list', '--db', db])).stdout, /^Alice {2}/);
    // --db and MCAUTH_DB win over the file's db.
    const other = join(dir, 'other.db');
    assert.equal((await run(['user', 'add', 'Other', '--db', other], {}, 'open-sesame\n')).code, 0);
    assert.match((await run(['user', 'list', '--config', path, '--db', other])).stdout, /^Other {2}/);
    assert.match((await run(['user', 'list', '--config', path], { MCAUTH_DB: other })).stdout, /^Other {2}/);
    // The file's db is checked.
    const wrongType = configPath({ db: 1 });
    const refused = await run(['user', 'list', '--config', wrongType]);
    assert.equal(refused.code, 2);
    assert.ok(refused.stderr.includes(`${wrongType}: "db" must be a JSON string`), refused.stderr);
    const copy = join(dir, 'backup.db');
    const backup = await run(['backup', copy, '--config', path]);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match((await run(['user', 'list', '--db', copy])).stdout, /^Alice {2}/);
  });
});
