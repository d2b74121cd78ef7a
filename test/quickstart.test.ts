// The README's quick start, run as written on a clean copy: its shell blocks in order, in a temp
// folder holding only dist/server.js, and every answer of the curl session held to the answer
// the README shows under it. A quick start that fails as written is the first thing an owner meets.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT, runProc, spawnListening, type Listening } from './helpers/process.ts';
import { blockPath, builtCheckout, hasCurl, literalPattern, shellBlocks } from './helpers/shell-blocks.ts';

let tmp: ReturnType<typeof builtCheckout> | undefined;
let server: Listening | undefined;
after(async () => {
  await server?.stop();
  tmp?.cleanup();
});

/** The ```sh blocks of the README's "Quick start" section, in order. */
function quickStartBlocks(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Quick start\n([\s\S]*?)(?=^## )/m.exec(readme);
  assert.ok(section, 'the README has a "## Quick start" section');
  return shellBlocks(section[1]!);
}

/** A block's commands: its lines without comment lines and without trailing comments. */
const commands = (block: string): string[] =>
  block
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
    .map((l) => l.replace(/\s+#\s.*$/, ''));

/** A README answer as a pattern: `…` stands for a value the server makes up (a token). */
const answerPattern = (shown: string): RegExp => new RegExp(`^${literalPattern(shown).replaceAll('…', '[^"]+')}$`);

test('the quick start runs as written and every answer is the one it shows', { skip: hasCurl ? false : 'curl is not installed' }, async () => {
  const [install, player, serve, session, ...rest] = quickStartBlocks();
  assert.equal(rest.length, 0, 'the quick start has four shell blocks: install and test, the first player, the server, the session');

  // The first block is not run: npm install fetches the dependencies and npm test is the whole
  // suite, which this file is part of. It must say to build, which makes what the rest runs:
  // the test stands in with the dist/server.js the suite's own build made (in tmp).
  assert.deepEqual(commands(install!), ['npm install && npm run build', 'npm test']);
  const env = { PATH: blockPath() };
  tmp = builtCheckout();

  const added = await runProc(['sh', '-c', player!], { cwd: tmp.dir, env });
  assert.equal(added.code, 0, `${player}\nstdout: ${added.stdout}\nstderr: ${added.stderr}`);
  assert.match(added.stdout, /^Added Alice [0-9a-f-]{36}$/m);

  // The server as the README starts it, on any free port instead of 8080 (the machine is shared).
  const [start, ...more] = commands(serve!);
  assert.equal(more.length, 0, 'the server block is one command');
  assert.equal(start, 'node dist/server.js');
  server = await spawnListening(['sh', '-c', `exec ${start}`], { cwd: tmp.dir, env: { ...env, MCAUTH_PORT: '0' } });
  assert.equal(server.host, '127.0.0.1', 'it listens on loopback');

  const script = session!.replaceAll('127.0.0.1:8080', `127.0.0.1:${server.port}`);
  assert.notEqual(script, session, 'the session calls http://127.0.0.1:8080');
  const run = await runProc(['sh', '-c', script], { cwd: tmp.dir, env, timeoutMs: 60_000 });
  assert.equal(run.code, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
  const shown = session!.split('\n').filter((l) => l.startsWith('# {')).map((l) => l.slice(2));
  const answers = run.stdout.trim().split('\n');
  assert.equal(shown.length, 5, 'the README shows an answer under each of the five calls');
  assert.equal(answers.length, shown.length, run.stdout);
  for (const [i, answer] of answers.entries()) assert.match(answer, answerPattern(shown[i]!), `answer ${i + 1}`);
  for (const path of ['/auth', '/join', '/hasJoined', '/profile', '/profiles']) assert.ok(session!.includes(`$S${path}`), `the session calls ${path}`);
});

// The comparison can fail: a made-up value matches only where the README shows `…`.
test('a shown answer matches only its own shape', () => {
  assert.match('{"result":{"accessToken":"f00d"}}', answerPattern('{"result":{"accessToken":"…"}}'));
  assert.doesNotMatch('{"result":false}', answerPattern('{"result":true}'));
  assert.deepEqual(commands('# a comment\nnode dist/server.js   # serves\n'), ['node dist/server.js']);
});
