import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envName, optionsHelp, resolveDb, resolveServeConfig, SERVE_OPTIONS, withBareValues } from '../../src/cli/options.ts';
import { parseCommandLine, UsageError } from '../../src/cli/usage.ts';

test('defaults: loopback, 8080, extended, 30 s joins, 30 day tokens, 100 names, bounded hashing and connections, no key, no account page', () => {
  assert.deepEqual(resolveServeConfig({}, {}), {
    host: '127.0.0.1',
    port: 8080,
    db: 'mcauth.db',
    basePath: '',
    variant: 'extended',
    joinTtl: 30,
    tokenTtl: 2_592_000,
    maxProfiles: 100,
    hashConcurrency: 4,
    hashQueue: 64,
    headersTimeout: 10,
    requestTimeout: 30,
    keepAliveTimeout: 5,
    maxConnections: 1024,
    maxConnectionsPerAddress: 64,
    apiKey: '',
    synchronous: 'normal',
    addressLoginLimit: 120,
    publicUrl: '',
    hdTextures: false,
    adminToken: '',
    metrics: false,
    logLevel: 'info',
    logFormat: 'auto',
    shutdownTimeout: 10,
    workers: 1,
    yggdrasil: false,
    yggdrasilKey: '',
    minPasswordLength: 8,
    allowHttpTextures: false,
    trustProxy: '',
    relay: '127.0.0.1,::1',
    accountPage: false,
    admins: '',
    serverName: '',
    registration: 'off',
    registrationUuid: 'random',
    registrationsPerAddress: 5,
    registrationsPerHour: 60,
    resetTtl: 3600,
  });
});

test('--trust-proxy takes a list of addresses and CIDR ranges; its old boolean form means loopback', () => {
  const trust = (flags: Record<string, unknown>, env: Record<string, string> = {}, file?: unknown): string =>
    resolveServeConfig(flags, env, file === undefined ? undefined : { path: 'c.json', values: { trustProxy: file } }).trustProxy;
  assert.equal(trust({ 'trust-proxy': ' 10.0.0.1, 192.168.0.0/16 ,2001:db8::/48' }), '10.0.0.1,192.168.0.0/16,2001:db8::/48');
  assert.equal(trust({ 'trust-proxy': 'true' }), '127.0.0.1,::1', 'the bare flag, as withBareValues gives it');
  assert.equal(trust({}, { MCAUTH_TRUST_PROXY: '1' }), '127.0.0.1,::1');
  assert.equal(trust({}, { MCAUTH_TRUST_PROXY: 'false' }), '');
  assert.equal(trust({}, {}, true), '127.0.0.1,::1');
  assert.equal(trust({}, {}, false), '');
  assert.equal(trust({}, {}, '::1'), '::1');
  for (const bad of ['maybe', '10.0.0.0/33', '::/129', '10.0.0.0/', '300.1.1.1', 'example.org', '10.0.0.0/8/8']) {
    assert.throws(() => trust({ 'trust-proxy': bad }), { message: /--trust-proxy must be IP addresses or CIDR ranges/ }, bad);
  }
  assert.throws(() => resolveServeConfig({ relay: 'localhost' }, {}), { message: /--relay must be IP addresses or CIDR ranges, comma-separated: "localhost"/ });
  assert.equal(resolveServeConfig({ relay: '' }, {}).relay, '', 'no relays');
  assert.deepEqual(withBareValues(['--trust-proxy']), ['--trust-proxy=true']);
  assert.deepEqual(withBareValues(['--trust-proxy', '--metrics']), ['--trust-proxy=true', '--metrics']);
  assert.deepEqual(withBareValues(['--trust-proxy', '10.0.0.1']), ['--trust-proxy', '10.0.0.1']);
  assert.deepEqual(withBareValues(['--trust-proxy=::1']), ['--trust-proxy=::1']);
});

test('a flag wins over the environment, which wins over the default', () => {
  const config = resolveServeConfig({ port: '9000' }, { MCAUTH_PORT: '9100', MCAUTH_VARIANT: 'base' });
  assert.equal(config.port, 9000);
  assert.equal(config.variant, 'base');
});

test('invalid values name their source', () => {
  assert.throws(() => resolveServeConfig({ port: '70000' }, {}), { name: 'UsageError', message: /--port must be a whole number from 0 to 65535, got "70000"/ });
  assert.throws(() => resolveServeConfig({}, { MCAUTH_JOIN_TTL: '-1' }), { message: /MCAUTH_JOIN_TTL must be a whole number/ });
  assert.throws(() => resolveServeConfig({ variant: 'full' }, {}), { message: /--variant must be base or extended/ });
  assert.throws(() => resolveServeConfig({ synchronous: 'off' }, {}), { message: /--synchronous must be normal or full/ });
  assert.equal(resolveServeConfig({}, { MCAUTH_SYNCHRONOUS: 'full' }).synchronous, 'full');
  assert.throws(() => resolveServeConfig({ host: '' }, {}), { message: /--host must not be empty/ });
  assert.throws(() => resolveServeConfig({ 'max-profiles': '1e3' }, {}), UsageError);
  // A refused key is not echoed: it may be most of the real one.
  assert.throws(() => resolveServeConfig({ 'api-key': 'short-secret' }, {}), { message: '--api-key must be at least 16 of A-Z a-z 0-9 . _ ~ -' });
  assert.throws(() => resolveServeConfig({ 'api-key': 'long+enough&but%not-url-safe' }, {}), { message: /--api-key must be/ });
  assert.equal(resolveServeConfig({ 'api-key': 'Long-enough_and.url~safe' }, {}).apiKey, 'Long-enough_and.url~safe');
  assert.equal(resolveServeConfig({ 'public-url': 'https://auth.example/' }, {}).publicUrl, 'https://auth.example', 'no trailing slash');
  assert.throws(() => resolveServeConfig({ 'public-url': 'ftp://x' }, {}), { message: /--public-url must be an http/ });
  assert.equal(resolveServeConfig({ 'hd-textures': true }, {}).hdTextures, true);
  assert.equal(resolveServeConfig({}, { MCAUTH_HD_TEXTURES: '1' }).hdTextures, true);
  assert.throws(() => resolveServeConfig({}, { MCAUTH_HD_TEXTURES: 'maybe' }), { message: 'MCAUTH_HD_TEXTURES must be true or false (or 1/0, yes/no, on/off), got "maybe"' });
  assert.throws(() => resolveServeConfig({ 'admin-token': 'has a space in it!' }, {}), { message: '--admin-token must be at least 16 printable ASCII characters, no spaces' });
  assert.throws(() => resolveServeConfig({ 'admin-token': 'ünïcödé-token-0123' }, {}), { message: /--admin-token must be/ });
  assert.throws(() => resolveServeConfig({ 'admin-token': 'same-secret-0123456', 'api-key': 'same-secret-0123456' }, {}), { message: '--admin-token must differ from --api-key' });
  assert.throws(() => resolveServeConfig({ 'headers-timeout': '60' }, {}), { message: '--headers-timeout must not be longer than --request-timeout' });
});

// Rule: the base path goes into every route and the account page's cookie Path; nothing in it may
// add a cookie attribute (";", ","), name a path no request matches (a space, "?", "#", "\\", "//"
// that a proxy merges, a bare "%"), or climb (".."). What a URL path holds as written passes.
test('--base-path: a URL path between single slashes, without ; , spaces, ? or #; anything else is refused', () => {
  for (const good of ['', '/', '/mc', 'mc', '/mc/', '//mc//', '/a.b/c_d/e~f-g', "/auth:v2/@team/!$&'()*+=", '/caf%C3%A9']) {
    assert.equal(resolveServeConfig({ 'base-path': good }, {}).basePath, good, good);
  }
  const bad = ['/mc;Domain=evil.example', '/mc,x', '/m c', '/mc%2', '/mc%zz', '/mc?x', '/mc#x', '/..', '/mc/./x', '/é', '/mc\\x', '/mc//auth', '/mc\tx'];
  for (const path of bad) {
    assert.throws(() => resolveServeConfig({ 'base-path': path }, {}), { name: 'UsageError', message: /--base-path must be a URL path, such as \/mc/ }, path);
  }
  assert.throws(() => resolveServeConfig({}, { MCAUTH_BASE_PATH: '/mc; HttpOnly' }), { message: /MCAUTH_BASE_PATH must be a URL path/ });
});

test('--server-name: one line of at most 64 characters (code points), trimmed; none by default', () => {
  const name = (flags: Record<string, unknown>, env: Record<string, string> = {}): string => resolveServeConfig(flags, env).serverName;
  assert.equal(name({}), '');
  assert.equal(name({ 'server-name': '  Craftland ' }), 'Craftland');
  assert.equal(name({}, { MCAUTH_SERVER_NAME: 'From the environment' }), 'From the environment');
  assert.equal(name({ 'server-name': '⛏'.repeat(64) }), '⛏'.repeat(64), '64 code points, though more UTF-16 units');
  assert.equal(name({ 'server-name': '<b>"Craft" & \'Co\'</b>' }), '<b>"Craft" & \'Co\'</b>', 'taken as it is: the page escapes it');
  for (const bad of ['x'.repeat(65), 'two\nlines', 'tab\there', 'escape\u001b[31m', 'lone \ud800']) {
    assert.throws(() => name({ 'server-name': bad }), { name: 'UsageError', message: /^--server-name must be one line of at most 64 characters, got / }, JSON.stringify(bad));
  }
  assert.throws(() => name({}, { MCAUTH_SERVER_NAME: 'x'.repeat(65) }), { message: /^MCAUTH_SERVER_NAME must be one line of at most 64 characters/ });
});

test('every option has an environment variable, and help lists both', () => {
  const help = optionsHelp();
  for (const o of SERVE_OPTIONS) {
    assert.ok(help.includes(`--${o.flag}`), o.flag);
    assert.ok(help.includes(envName(o.flag)), envName(o.flag));
  }
  assert.equal(envName('base-path'), 'MCAUTH_BASE_PATH');
});

test('the database path of user commands: flag, environment, default', () => {
  assert.equal(resolveDb('a.db', { MCAUTH_DB: 'b.db' }), 'a.db');
  assert.equal(resolveDb(undefined, { MCAUTH_DB: 'b.db' }), 'b.db');
  assert.equal(resolveDb(undefined, {}), 'mcauth.db');
  assert.throws(() => resolveDb('', {}), UsageError);
});

test('command lines: unknown options, missing values and stray arguments are usage errors', () => {
  const options = { db: { type: 'string' }, slim: { type: 'boolean' } } as const;
  assert.deepEqual(parseCommandLine(['Alice', '--db=x.db'], options, ['NAME']).positionals, ['Alice']);
  assert.throws(() => parseCommandLine(['--nope'], options, []), { message: 'unknown option "--nope"' });
  assert.throws(() => parseCommandLine(['--db'], options, []), { message: '--db needs a value' });
  assert.throws(() => parseCommandLine(['a', 'b'], options, ['NAME']), { message: 'expected NAME, got "a" "b"' });
  assert.throws(() => parseCommandLine([], options, ['NAME']), { message: 'expected NAME, got none' });
});

test('a switch in the environment takes 1/0, true/false, yes/no and on/off, in any case', () => {
  for (const word of ['1', 'true', 'TRUE', 'yes', 'Yes', 'on', 'ON']) {
    assert.equal(resolveServeConfig({}, { MCAUTH_ACCOUNT_PAGE: word }).accountPage, true, word);
    assert.equal(resolveServeConfig({}, { MCAUTH_TRUST_PROXY: word }).trustProxy, resolveServeConfig({ 'trust-proxy': 'true' }, {}).trustProxy, word);
  }
  for (const word of ['0', 'false', 'False', 'no', 'NO', 'off', 'Off', '']) {
    assert.equal(resolveServeConfig({}, { MCAUTH_ACCOUNT_PAGE: word }).accountPage, false, word);
  }
  for (const word of ['0', 'false', 'no', 'OFF']) assert.equal(resolveServeConfig({}, { MCAUTH_TRUST_PROXY: word }).trustProxy, '', word);
  for (const word of ['y', 'enabled', '2', ' yes']) {
    assert.throws(() => resolveServeConfig({}, { MCAUTH_METRICS: word }), { message: /^MCAUTH_METRICS must be true or false \(or 1\/0, yes\/no, on\/off\)/ }, word);
  }
});

test('--admins takes player names, comma-separated, spaces dropped; anything else is refused', () => {
  assert.equal(resolveServeConfig({ admins: ' Boss , helper_2,' }, {}).admins, 'Boss,helper_2');
  assert.equal(resolveServeConfig({}, { MCAUTH_ADMINS: 'Boss' }).admins, 'Boss');
  assert.equal(resolveServeConfig({}, {}).admins, '');
  for (const bad of ['Bo', 'Boss,no spaces', 'Boss;Other', 'x'.repeat(17)]) {
    assert.throws(() => resolveServeConfig({ admins: bad }, {}), { message: /--admins must be player names \(3 to 16 letters, digits or _\), comma-separated/ }, bad);
  }
});
