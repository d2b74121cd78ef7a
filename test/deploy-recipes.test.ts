// Recipes of docs/deployment.md beyond the units themselves: socket activation tried from a shell
// with systemd-socket-activate (the page's line, run with only its port, node and paths moved:
// the first connection starts the server on the socket, its listening line says fd 3, it answers,
// and listens with the unit's backlog); and the TLS certificate's certbot line, whose name and
// paths must be the ones deploy/nginx.conf reads.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SYSTEMD_SOCKET_BACKLOG } from '../src/cli/systemd-socket.ts';
import { childEnv, fetchReply, freePort, ROOT, SERVER_JS, tempDir } from './helpers/process.ts';
import { listenBacklog } from './helpers/socket-activation.ts';

const DEPLOYMENT = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');
const NGINX = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
const tmp = tempDir();

/** The page's first line that starts with `start`. */
function pageLine(start: string): string {
  const line = DEPLOYMENT.split('\n').find((l) => l.startsWith(start));
  assert.ok(line, `docs/deployment.md has a line starting ${start}`);
  return line;
}

const activator = spawnSync('systemd-socket-activate', ['--help']).status === 0;

test('systemd-socket-activate, as the page runs it: the first connection starts the server on fd 3, with the unit\'s backlog', { skip: activator ? false : 'systemd-socket-activate is not installed (Debian: systemd)' }, async () => {
  const port = await freePort();
  const written = pageLine('systemd-socket-activate ');
  const moved = written.replace('8080', String(port)).replace(' node dist/server.js ', ` ${process.execPath} ${SERVER_JS} `).replace('mcauth.db', join(tmp.dir, 'activated.db'));
  assert.notEqual(moved, written);
  const [command, ...args] = moved.split(' ');
  const child = spawn(command!, args, { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  try {
    // It says so on standard error once it listens (before that, a connection would be refused).
    await new Promise<void>((listening, fail) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        if (err.includes('Listening on')) listening();
      });
      void exited.then((code) => fail(new Error(`systemd-socket-activate ended (${code}): ${err}`)));
    });
    const health = await fetchReply(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200, health.text);
    // The log gathers its lines a moment before it writes them: wait for the line, not the moment.
    const banner = new RegExp(`mcauth listening on http://127\\.0\\.0\\.1:${port} \\(.*, on the socket systemd passed as fd 3\\)`);
    while (!banner.test(out) && child.exitCode === null) await new Promise((r) => child.stdout.once('data', r));
    assert.match(out, banner, out);
    assert.equal(listenBacklog(port), SYSTEMD_SOCKET_BACKLOG, 'the backlog of the socket the server listens on');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, `${out}\n${err}`);
});

test('the certbot line gets the certificate of the name deploy/nginx.conf serves, where it reads it', () => {
  const name = /\s-d (\S+)/.exec(pageLine('certbot certonly '))?.[1];
  assert.ok(name, 'the line names the domain');
  assert.match(NGINX, new RegExp(`^\\s*server_name ${name.replaceAll('.', '\\.')};`, 'm'));
  const paths = [...NGINX.matchAll(/^\s*(ssl_certificate(?:_key)?)\s+(\S+);/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(paths, [
    ['ssl_certificate', `/etc/letsencrypt/live/${name}/fullchain.pem`],
    ['ssl_certificate_key', `/etc/letsencrypt/live/${name}/privkey.pem`],
  ]);
  // Its own challenge server needs port 80, which nginx holds: stopped around it, and started again.
  assert.match(DEPLOYMENT, /--pre-hook 'systemctl stop nginx' --post-hook 'systemctl start nginx'/);
});
