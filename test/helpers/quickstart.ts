// The README's quick start, as test/quickstart.test.ts runs it from a clone (`node dist/server.js`
// for `./mcauth`) and test/release.test.ts on the release: its shell blocks, and its first player,
// its server and its curl session run as written, every answer held to the one the README shows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runProc, spawnListening, type Listening } from './process.ts';
import { literalPattern, shellBlocks } from './shell-blocks.ts';

/** The README's quick start blocks: the release's install, a clone's, the first player, the server, the session. */
export interface QuickStart {
  release: string;
  clone: string;
  player: string;
  serve: string;
  session: string;
}

/** The ```sh blocks of the README's "Quick start" section, by what each does. */
export function quickStart(): QuickStart {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Quick start\n([\s\S]*?)(?=^## )/m.exec(readme);
  assert.ok(section, 'the README has a "## Quick start" section');
  const [release, clone, player, serve, session, ...rest] = shellBlocks(section[1]!);
  assert.equal(rest.length, 0, 'the quick start has five shell blocks: the release, a clone, the first player, the server, the session');
  return { release: release!, clone: clone!, player: player!, serve: serve!, session: session! };
}

/** A block's commands: its lines without comment lines and without trailing comments. */
export const commands = (block: string): string[] =>
  block
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
    .map((l) => l.replace(/\s+#\s.*$/, ''));

/** A README answer as a pattern: `…` stands for a value the server makes up (a token). */
export const answerPattern = (shown: string): RegExp => new RegExp(`^${literalPattern(shown).replaceAll('…', '[^"]+')}$`);

/**
 * Runs the first player's block, starts the server's (on any free port instead of 8080: the
 * machine is shared) and runs the session against it, in `dir` with `env`, `./mcauth` replaced
 * by `program`; checks every answer. The server is stopped after, whatever happened.
 */
export async function runQuickStart(dir: string, env: Record<string, string>, program = './mcauth'): Promise<void> {
  const blocks = quickStart();
  const player = blocks.player.replaceAll('./mcauth', program);
  const added = await runProc(['sh', '-c', player], { cwd: dir, env });
  assert.equal(added.code, 0, `${player}\nstdout: ${added.stdout}\nstderr: ${added.stderr}`);
  assert.match(added.stdout, /^Added Alice [0-9a-f-]{36}$/m);

  const [start, ...more] = commands(blocks.serve);
  assert.equal(more.length, 0, 'the server block is one command');
  assert.equal(start, './mcauth');
  let server: Listening | undefined;
  try {
    server = await spawnListening(['sh', '-c', `exec ${program}`], { cwd: dir, env: { ...env, MCAUTH_PORT: '0' } });
    assert.equal(server.host, '127.0.0.1', 'it listens on loopback');
    const { session } = blocks;
    const script = session.replaceAll('127.0.0.1:8080', `127.0.0.1:${server.port}`);
    assert.notEqual(script, session, 'the session calls http://127.0.0.1:8080');
    const run = await runProc(['sh', '-c', script], { cwd: dir, env, timeoutMs: 60_000 });
    assert.equal(run.code, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    const shown = session.split('\n').filter((l) => l.startsWith('# {')).map((l) => l.slice(2));
    const answers = run.stdout.trim().split('\n');
    assert.equal(shown.length, 5, 'the README shows an answer under each of the five calls');
    assert.equal(answers.length, shown.length, run.stdout);
    for (const [i, answer] of answers.entries()) assert.match(answer, answerPattern(shown[i]!), `answer ${i + 1}`);
    for (const path of ['/auth', '/join', '/hasJoined', '/profile', '/profiles']) assert.ok(session.includes(`$S${path}`), `the session calls ${path}`);
  } finally {
    await server?.stop();
  }
}
