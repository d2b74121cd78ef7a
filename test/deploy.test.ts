// deploy/: the systemd unit and its socket, the example config and the nginx example. The unit's
// sandboxing lines are required, and it takes its socket from mcauth.socket; systemd-analyze
// verify accepts both (where systemd-analyze exists); its ExecStart arguments with the example config are accepted by the real program; the example
// config is valid and holds no secret; the nginx example keeps the service on loopback, passes
// X-Forwarded-*, bounds bodies, logs no query string, and passes nginx -t (where nginx exists);
// the Deno recipes (docs/deployment.md, the unit) grant exactly the variables the program reads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readConfigFile } from '../src/cli/config-file.ts';
import { envName, resolveServeConfig, SERVE_OPTIONS, USER_SETTINGS, type ServeConfig } from '../src/cli/options.ts';
import { SYSTEMD_SOCKET_BACKLOG } from '../src/cli/systemd-socket.ts';
import { childEnv, ROOT, SERVER_JS, tempDir } from './helpers/process.ts';

const UNIT_PATH = join(ROOT, 'deploy', 'mcauth.service');
const SOCKET_PATH = join(ROOT, 'deploy', 'mcauth.socket');
const EXAMPLE_CONFIG = join(ROOT, 'deploy', 'config.example.json');
const NGINX_PATH = join(ROOT, 'deploy', 'nginx.conf');
const UNIT = readFileSync(UNIT_PATH, 'utf8');
const SOCKET = readFileSync(SOCKET_PATH, 'utf8');
const NGINX = readFileSync(NGINX_PATH, 'utf8');

const tmp = tempDir();
after(() => tmp.cleanup());

/** An executable by name on PATH or in the usual sbin folders (nginx lives in /usr/sbin), or undefined. */
function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin'];
  for (const dir of dirs.filter((d) => d !== '')) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A unit file as systemd reads it: sections of [key, value] in order (comments and continuations handled). */
function parseUnit(text: string): Map<string, [string, string][]> {
  const sections = new Map<string, [string, string][]>();
  let current: [string, string][] | undefined;
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = [];
      sections.set(section[1]!, current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current && eq > 0, `not a key=value line in a section: ${line}`);
    current.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return sections;
}

const unit = parseUnit(UNIT);
const service = unit.get('Service') ?? [];
/** Every value a [Service] key is given, in order (systemd lets some keys repeat). */
const values = (key: string): string[] => service.filter(([k]) => k === key).map(([, v]) => v);
/** The key's value as systemd uses it: the last one. */
const value = (key: string): string | undefined => values(key).at(-1);

/** A systemd time span ("30s", "1min 30s", "90") in seconds. */
function seconds(span: string): number {
  const units: Record<string, number> = { '': 1, s: 1, sec: 1, second: 1, seconds: 1, m: 60, min: 60, minute: 60, minutes: 60, h: 3600, hr: 3600, hour: 3600, hours: 3600, ms: 0.001, msec: 0.001 };
  let total = 0;
  const parts = span.trim().split(/\s+/);
  for (const part of parts) {
    const m = /^(\d+(?:\.\d+)?)([a-z]*)$/.exec(part);
    assert.ok(m && m[2]! in units, `not a time span: ${span}`);
    total += Number(m[1]) * units[m[2]!]!;
  }
  return total;
}

/** A command line of the unit split into words (the unit uses no quoting; a quote would need systemd's rules). */
function words(line: string): string[] {
  assert.ok(!/["'\\]/.test(line), `${line}: no quoting (this test splits it on spaces)`);
  return line.split(/\s+/);
}

/** ExecStart split into words. */
function execStart(): string[] {
  const line = value('ExecStart');
  assert.ok(line, 'the unit has an ExecStart');
  return words(line);
}

/** The commented ExecStart that runs the .js on a Node of the host's instead, split into words. */
function nodeExecStart(): string[] {
  const lines = [...UNIT.matchAll(/^#ExecStart=(.*)$/gm)].map((m) => m[1]!);
  assert.equal(lines.length, 1, 'one commented ExecStart: the .js on Node');
  return words(lines[0]!);
}

/** The program's arguments of ExecStart: after the release's executable, or after node (or deno) and server.js. */
function programArgs(command: string[]): string[] {
  const [binary, script, ...args] = command;
  if (/^\/\S+\/mcauth$/.test(binary!)) return command.slice(1);
  assert.match(binary!, /^\/\S+\/(node|deno)$/, 'an absolute path to the executable, or to node (or deno)');
  assert.match(script!, /^\/\S+\/server\.js$/, 'an absolute path to server.js');
  return args;
}

/** The settings the unit's ExecStart gives, with its --config path replaced by deploy/config.example.json. */
function unitSettings(command = execStart()): { run: ReturnType<typeof spawnSync>; printed: ServeConfig } {
  const args = programArgs(command);
  const at = args.indexOf('--config');
  assert.ok(at >= 0 && args[at + 1], 'ExecStart passes --config FILE');
  const replaced = args.map((a, i) => (i === at + 1 ? EXAMPLE_CONFIG : a));
  const run = spawnSync(process.execPath, [SERVER_JS, ...replaced, '--print-config'], { env: childEnv(), encoding: 'utf8', timeout: 15_000 });
  assert.equal(run.status, 0, `${replaced.join(' ')} --print-config\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return { run, printed: JSON.parse(run.stdout as string) as ServeConfig };
}

describe('deploy/mcauth.service', () => {
  // Rule: the unit carries the sandboxing the deployment promises, each line as systemd reads it.
  test('has the required sandboxing and lifecycle lines', () => {
    const required: [string, (v: string | undefined) => boolean, string][] = [
      ['DynamicUser', (v) => v === 'yes', 'yes'],
      ['StateDirectory', (v) => v?.split(/\s+/).includes('mcauth') === true, 'mcauth'],
      ['ProtectSystem', (v) => v === 'strict', 'strict'],
      ['ProtectHome', (v) => v === 'yes' || v === 'tmpfs', 'yes'],
      ['PrivateTmp', (v) => v === 'yes', 'yes'],
      ['PrivateDevices', (v) => v === 'yes', 'yes'],
      ['NoNewPrivileges', (v) => v === 'yes', 'yes'],
      ['RestrictAddressFamilies', (v) => v !== undefined && v.split(/\s+/).includes('AF_INET') && !v.startsWith('~'), 'an allow list with AF_INET'],
      ['CapabilityBoundingSet', (v) => v === '', 'empty: no capabilities'],
      ['KillSignal', (v) => v === 'SIGTERM', 'SIGTERM'],
      // The primary of --workers stops accepting before its workers stop: it alone is told.
      ['KillMode', (v) => v === 'mixed', 'mixed'],
      ['Restart', (v) => v === 'on-failure', 'on-failure'],
      ['ProtectKernelTunables', (v) => v === 'yes', 'yes'],
      ['ProtectControlGroups', (v) => v === 'yes', 'yes'],
      ['RestrictNamespaces', (v) => v === 'yes', 'yes'],
      ['LockPersonality', (v) => v === 'yes', 'yes'],
      ['SystemCallArchitectures', (v) => v === 'native', 'native'],
    ];
    for (const [key, ok, want] of required) assert.ok(ok(value(key)), `${key}= should be ${want}, is ${JSON.stringify(value(key))}`);
    assert.ok(values('SystemCallFilter').includes('@system-service'), 'SystemCallFilter=@system-service');
    assert.equal(unit.get('Install')?.find(([k]) => k === 'WantedBy')?.[1], 'multi-user.target');
  });

  // Rule: MemoryDenyWriteExecute must not be on: V8's JIT needs writable, executable memory.
  test('leaves MemoryDenyWriteExecute off', () => {
    for (const v of values('MemoryDenyWriteExecute')) assert.ok(['no', 'false', '0', 'off'].includes(v), `MemoryDenyWriteExecute=${v} would crash V8`);
  });

  // Rule: ExecStart runs the real program with a config it accepts (the example stands in for
  // /etc/mcauth/config.json), and the db it names lives in the unit's StateDirectory.
  test('ExecStart with the example config is accepted by the program', () => {
    const { printed } = unitSettings();
    const state = value('StateDirectory')!.split(/\s+/)[0]!;
    assert.ok(printed.db.startsWith(`/var/lib/${state}/`), `the db ${printed.db} is under /var/lib/${state} (the only writable place)`);
    assert.equal(printed.host, '127.0.0.1', 'the service stays on loopback; the proxy faces the network');
  });

  // Rule: the unit runs the release's executable installed as /opt/mcauth/mcauth, and its commented
  // alternative runs the .js on node with the same arguments, so either install works with it.
  test("runs the release's executable, or with its commented line the .js on node, with the same arguments", () => {
    assert.equal(execStart()[0], '/opt/mcauth/mcauth');
    const [node, script] = nodeExecStart();
    assert.match(node!, /^\/\S+\/node$/);
    assert.equal(script, '/opt/mcauth/server.js');
    assert.deepEqual(programArgs(nodeExecStart()), programArgs(execStart()));
    assert.deepEqual(unitSettings(nodeExecStart()).printed, unitSettings().printed);
    // The install lines at the top name both files.
    assert.match(UNIT, /^#\s+install -D -m 0755 mcauth-\S+-linux-x64 \/opt\/mcauth\/mcauth$/m);
    assert.match(UNIT, /install -D -m 0644 mcauth-\S+\.js \/opt\/mcauth\/server\.js/);
  });

  // Rule: the comment right above ExecStart says which Node the .js needs and how to check the one the alternative names.
  test('says above ExecStart that the node of its .js line must be 22.13 or later, and how to check it', () => {
    const lines = UNIT.split('\n');
    const at = lines.findIndex((l) => l.startsWith('ExecStart='));
    let first = at;
    while (first > 0 && lines[first - 1]!.startsWith('#')) first--;
    const comment = lines.slice(first, at).join('\n');
    const [binary] = nodeExecStart();
    assert.match(comment, /Node\.js 22\.13 or later/, `the comment above ExecStart:\n${comment}`);
    assert.ok(comment.includes(`${binary} --version`), `the comment shows "${binary} --version":\n${comment}`);
  });

  // Rule: systemd waits longer than mcauth's own shutdown before SIGKILL.
  test('TimeoutStopSec is longer than the shutdown timeout', () => {
    const { printed } = unitSettings();
    const stop = value('TimeoutStopSec');
    assert.ok(stop, 'TimeoutStopSec is set');
    assert.ok(seconds(stop) > printed.shutdownTimeout, `TimeoutStopSec=${stop} must exceed shutdownTimeout=${printed.shutdownTimeout} s`);
    assert.equal(seconds('1min 30s'), 90, 'the span parser itself');
  });

  /**
   * systemd-analyze verify on a copy of the unit whose ExecStart names this machine's node and
   * dist/server.js: verify refuses a unit whose binary is missing ("Command /opt/mcauth/mcauth is
   * not executable"), and CI machines have no release installed. Everything else is verbatim.
   * Verify prints most problems (an unknown key, a bad value) as warnings and still exits 0, so a
   * line naming the unit on stderr fails too. mcauth.socket, which the unit requires, is
   * verified beside it.
   */
  function verify(text: string, name: string): { status: number | null; problems: string[] } {
    const dir = join(tmp.dir, name);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'mcauth.service');
    const args = programArgs(execStart());
    const copy = text.replace(/^ExecStart=.*$/m, `ExecStart=${[process.execPath, SERVER_JS, ...args].join(' ')}`);
    assert.notEqual(copy, text, 'ExecStart was rewritten');
    writeFileSync(path, copy);
    writeFileSync(join(dir, 'mcauth.socket'), SOCKET);
    const r = spawnSync('systemd-analyze', ['verify', path, join(dir, 'mcauth.socket')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SYSTEMD_LOG_COLOR: '0', SYSTEMD_PAGER: '' } });
    const problems = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes(dir) || /mcauth\.(service|socket)/.test(l));
    return { status: r.status, problems };
  }

  const analyze = findTool('systemd-analyze');

  // Rule: the unit takes its listening socket from mcauth.socket (socket activation), on
  // loopback at the example config's port, so a restart refuses no connection; a reload is SIGHUP.
  test('requires mcauth.socket, which listens on loopback at the configured port, and reloads by SIGHUP', () => {
    const unitSection = unit.get('Unit') ?? [];
    assert.ok(unitSection.some(([k, v]) => k === 'Requires' && v.split(/\s+/).includes('mcauth.socket')), 'Requires=mcauth.socket');
    assert.ok(unitSection.some(([k, v]) => k === 'After' && v.split(/\s+/).includes('mcauth.socket')), 'After=mcauth.socket');
    assert.equal(value('ExecReload'), '/bin/kill -HUP $MAINPID');
    const socket = parseUnit(SOCKET);
    const listen = socket.get('Socket')?.filter(([k]) => k === 'ListenStream').map(([, v]) => v);
    const example = JSON.parse(readFileSync(EXAMPLE_CONFIG, 'utf8')) as { host: string; port: number };
    assert.deepEqual(listen, [`${example.host}:${example.port}`], 'one ListenStream=, where the example config would listen');
    assert.equal(socket.get('Install')?.find(([k]) => k === 'WantedBy')?.[1], 'sockets.target');
    // A service's IP filter does not apply to a socket passed to it: the socket unit has its own.
    assert.deepEqual(socket.get('Socket')?.filter(([k]) => k.startsWith('IPAddress')), [['IPAddressAllow', 'localhost'], ['IPAddressDeny', 'any']]);
    // Node listens on it again: with the unit's backlog, or its own 511 would replace it.
    const backlog = socket.get('Socket')?.find(([k]) => k === 'Backlog')?.[1];
    assert.equal(Number(backlog), SYSTEMD_SOCKET_BACKLOG, 'Backlog= as the server listens with it');
  });

  // Rule: systemd itself accepts every line of the unit.
  test('systemd-analyze verify accepts it', { skip: analyze ? false : 'systemd-analyze is not installed' }, () => {
    const good = verify(UNIT, 'good');
    assert.equal(good.status, 0, good.problems.join('\n'));
    assert.deepEqual(good.problems, []);
    // The check can fail: a misspelt key and a bad value are caught.
    const typo = verify(UNIT.replace(/^NoNewPrivileges=yes$/m, 'NoNewPrivilege=yes'), 'typo');
    assert.ok(typo.problems.some((l) => /Unknown key/i.test(l)), `a misspelt key is not reported: ${typo.problems.join('\n')}`);
    const badValue = verify(UNIT.replace(/^ProtectSystem=strict$/m, 'ProtectSystem=strictest'), 'bad-value');
    assert.ok(badValue.problems.length > 0, 'a bad value is not reported');
  });

  // Rule: systemd rates the sandbox's exposure low (at most 2.0 of 10) where it can rate a unit file offline.
  test('systemd-analyze security rates its exposure at most 2.0', { skip: analyze ? false : 'systemd-analyze is not installed' }, (t) => {
    const path = join(tmp.dir, 'security', 'mcauth.service');
    mkdirSync(join(tmp.dir, 'security'), { recursive: true });
    writeFileSync(path, UNIT);
    const r = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', path], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SYSTEMD_PAGER: '' } });
    const m = /Overall exposure level for \S+: (\d+(?:\.\d+)?)/.exec(`${r.stdout}\n${r.stderr}`);
    if (!m) return t.skip(`this systemd-analyze cannot rate a unit offline (systemd 250 or later can): ${r.stderr.split('\n')[0]}`);
    assert.ok(Number(m[1]) <= 2.0, `exposure ${m[1]}:\n${r.stdout}`);
  });
});

describe('deploy/config.example.json', () => {
  // Rule: the example is a valid --config file, for the deployment the unit describes, with no secret in it.
  test('is valid, on loopback, and holds no secret', () => {
    const file = readConfigFile(EXAMPLE_CONFIG);
    const settings = resolveServeConfig({}, {}, file);
    assert.equal(settings.host, '127.0.0.1');
    assert.equal(settings.apiKey, '', 'secrets belong in /etc/mcauth/mcauth.env, not in a world-readable example');
    assert.equal(settings.adminToken, '');
    assert.equal('apiKey' in file.values || 'adminToken' in file.values, false);
    assert.match(settings.publicUrl, /^https:\/\//, 'textures are served through the TLS proxy');
  });
});

describe('deploy/nginx.conf', () => {
  /** Directives (name and arguments) at any depth, comments removed. */
  const directives = NGINX.replace(/#[^\n]*/g, '')
    .split(/[;{}]/)
    .map((d) => d.trim().split(/\s+/))
    .filter((d) => d[0] !== '');
  const named = (name: string): string[][] => directives.filter((d) => d[0] === name).map((d) => d.slice(1));

  // Rule: the proxy forwards to mcauth on loopback, at the example config's port.
  test('proxies to mcauth on loopback', () => {
    const port = resolveServeConfig({}, {}, readConfigFile(EXAMPLE_CONFIG)).port;
    assert.deepEqual(named('server').filter((a) => a.length > 0), [[`127.0.0.1:${port}`]], 'the upstream is 127.0.0.1 at config.example.json\'s port');
    assert.ok(named('proxy_pass').length > 0);
    for (const [target] of named('proxy_pass')) assert.match(target!, /^http:\/\/(mcauth|127\.0\.0\.1:\d+)$/, 'proxy_pass without a path: the request URI passes unchanged');
    assert.ok(named('listen').some((a) => a.includes('ssl')), 'TLS is terminated here');
  });

  // Rule: the client's address and scheme are passed on.
  // Rule: the metrics are for a scraper on the host, never passed through to the internet.
  test('answers /metrics itself with a 404 instead of passing it on', () => {
    assert.match(NGINX, /location = \/metrics \{[^}]*return 404 '\{"success":false,"error":"Unknown endpoint"\}';\s*\}/);
  });

  // Rule: the JSON refusals nginx writes itself carry nosniff, as mcauth's own answers do.
  test('every JSON answer nginx writes itself says X-Content-Type-Options: nosniff', () => {
    const blocks = [...NGINX.replace(/#[^\n]*/g, '').matchAll(/location[^{]*\{([^}]*)\}/g)].map((m) => m[1]!).filter((b) => /return \d+ '\{/.test(b));
    assert.equal(blocks.length, 6, 'the 413, 429, 503 and /metrics answers, and the in-band refusals of /join and /profiles');
    for (const block of blocks) assert.match(block, /add_header\s+X-Content-Type-Options\s+nosniff\s+always\s*;/, block);
  });

  // Rule: a location with an add_header of its own inherits none of the server's (nginx's rule), so
  // each repeats the server's: no answer goes out without HSTS.
  test('every location with its own add_header repeats the server\'s headers', () => {
    const text = NGINX.replace(/#[^\n]*/g, '');
    const serverHeaders = [...text.replace(/location[^{]*\{[^}]*\}/g, '').matchAll(/add_header\s+([^;]+);/g)].map((m) => m[1]!.trim());
    assert.ok(serverHeaders.some((h) => h.startsWith('Strict-Transport-Security')), 'the server sends HSTS');
    const blocks = [...text.matchAll(/location[^{]*\{([^}]*)\}/g)].map((m) => m[1]!).filter((b) => /add_header/.test(b));
    assert.ok(blocks.length >= 4);
    for (const block of blocks) for (const header of serverHeaders) assert.ok(block.includes(`add_header ${header};`), `${header} is missing in:${block}`);
  });

  test('passes X-Forwarded-For and X-Forwarded-Proto', () => {
    const headers = new Map(named('proxy_set_header').map(([k, v]) => [k!.toLowerCase(), v]));
    assert.equal(headers.get('x-forwarded-for'), '$proxy_add_x_forwarded_for');
    assert.equal(headers.get('x-forwarded-proto'), '$scheme');
    assert.equal(headers.get('host'), '$host');
  });

  // Rule: bodies are bounded as mcauth bounds them: 64 KiB, 512 KiB for /join and /profiles, 1 MiB for uploads only (admin API, account page).
  test('limits bodies to 64 KiB, /join and /profiles to 512 KiB, and uploads to 1 MiB', () => {
    const sizes = named('client_max_body_size').map(([v]) => v);
    assert.deepEqual(sizes.sort(), ['1m', '1m', '512k', '512k', '64k']);
    const text = NGINX.replace(/#[^\n]*/g, '');
    const admin = /location\s+\/admin\/\s*\{([^}]*)\}/.exec(text);
    assert.ok(admin && /client_max_body_size\s+1m\s*;/.test(admin[1]!), 'the 1 MiB limit is inside location /admin/');
    const account = /location\s+~\s+\^\/account\/\(skin\|cape\)\$\s*\{([^}]*)\}/.exec(text);
    assert.ok(account && /client_max_body_size\s+1m\s*;/.test(account[1]!), 'and inside the account page\'s upload location');
  });

  // Rule: a LauncherServer crashes on a failure envelope from /join or /profiles: nginx's own
  // refusals there (body too large, mcauth down) are in-band, as mcauth's are.
  test('refuses in-band on /join and /profiles: false and []', () => {
    const text = NGINX.replace(/#[^\n]*/g, '');
    for (const [path, named, result] of [['/join', '@join_refused', 'false'], ['/profiles', '@profiles_refused', '[]']] as const) {
      const location = new RegExp(`location = ${path} \\{([^}]*)\\}`).exec(text)?.[1] ?? '';
      assert.match(location, /client_max_body_size\s+512k\s*;/, path);
      assert.match(location, new RegExp(`error_page 413 502 503 504 = ${named};`), path);
      const at = text.indexOf(`location ${named} {`);
      const refusal = at === -1 ? '' : text.slice(at, text.indexOf('\n    }', at));
      assert.ok(refusal.includes(`return 200 '{"success":true,"result":${result}}';`), `${named}: ${refusal}`);
    }
  });

  // Rule: no access log carries a query string (the API key may travel as ?key=).
  test('logs no query string', () => {
    const formats = new Map<string, string>();
    const text = NGINX.replace(/#[^\n]*/g, '');
    for (const m of text.matchAll(/log_format\s+(\S+)\s+([^;]*);/g)) formats.set(m[1]!, m[2]!);
    const logs = named('access_log');
    assert.ok(logs.length > 0, 'every server has an access_log');
    for (const [, format] of logs) {
      assert.ok(format && formats.has(format), `access_log uses a format defined here (the default "combined" logs $request): ${format}`);
      assert.doesNotMatch(formats.get(format)!, /\$(request|request_uri|args|query_string|arg_\w+|is_args)\b/, `format ${format} logs the query`);
    }
    assert.match(NGINX, /#[^\n]*error log[^\n]*/i, 'a comment notes that the error log may still hold it');
  });

  const nginx = findTool('nginx');
  const openssl = findTool('openssl');

  /** nginx -t on the example inside a minimal main config, with a throwaway certificate and logs in a temp folder. */
  function nginxTest(conf: string, name: string): { status: number | null; output: string } {
    const dir = join(tmp.dir, `nginx-${name}`);
    mkdirSync(dir, { recursive: true });
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    const made = spawnSync(openssl!, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=auth.example.org'], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const site = conf
      .replace(/ssl_certificate\s+\S+;/, `ssl_certificate ${cert};`)
      .replace(/ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${key};`)
      .replaceAll('/var/log/nginx/', `${dir}/`);
    writeFileSync(join(dir, 'mcauth.conf'), site);
    writeFileSync(join(dir, 'nginx.conf'), `error_log ${dir}/error.log;\npid ${dir}/nginx.pid;\nevents {}\nhttp {\n    include ${dir}/mcauth.conf;\n}\n`);
    const r = spawnSync(nginx!, ['-t', '-p', `${dir}/`, '-e', `${dir}/error.log`, '-c', join(dir, 'nginx.conf')], { encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  }

  // Rule: nginx accepts the example (as /etc/nginx/conf.d/mcauth.conf inside http { }).
  test('nginx -t accepts it', { skip: !nginx ? 'nginx is not installed' : !openssl ? 'openssl is not installed' : false }, () => {
    const good = nginxTest(NGINX, 'good');
    assert.equal(good.status, 0, good.output);
    assert.match(good.output, /test is successful/);
    // The check can fail: a broken directive is refused.
    const broken = nginxTest(NGINX.replace('client_max_body_size 64k;', 'client_max_body_size sixty-four;'), 'broken');
    assert.notEqual(broken.status, 0, broken.output);
  });
});

describe('the Deno recipes', () => {
  const DEPLOYMENT = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');
  const grants = (text: string): string[][] => [...text.matchAll(/--allow-env=([A-Z_,]+)/g)].map((m) => m[1]!.split(','));
  const SERVER = [...SERVE_OPTIONS.map((o) => envName(o.flag)), envName('config')];
  const USER = [envName('db'), envName('config'), ...USER_SETTINGS.map((key) => envName(SERVE_OPTIONS.find((o) => o.key === key)!.flag))];

  // Rule: the server's --allow-env lists every variable the program reads (each option's, and
  // MCAUTH_CONFIG): a missing one would end a narrowly granted server at start.
  test("docs/deployment.md's and the unit's server grants name every option's variable and MCAUTH_CONFIG", () => {
    const [docServer, docUser] = grants(DEPLOYMENT);
    assert.deepEqual(docServer, SERVER, 'docs/deployment.md, the server');
    assert.deepEqual(grants(UNIT), [SERVER], 'deploy/mcauth.service');
    assert.deepEqual(docUser, USER, 'docs/deployment.md, the user commands');
  });
});
