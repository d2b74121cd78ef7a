// docs/troubleshooting.md stays true: it answers the five symptoms it promises, and every message,
// log reason, outcome, flag and metric it quotes is one the program has (in src/ or --help), so a
// renamed message or flag fails here instead of leaving an owner a page that no longer matches.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli } from './helpers/process.ts';

const PAGE = readFileSync(join(ROOT, 'docs', 'troubleshooting.md'), 'utf8');

/** Every source file's text under src/, as one string. */
function sources(dir = join(ROOT, 'src')): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? readFileSync(join(dir, e.name), 'utf8') : ''))
    .join('\n');
}

test('answers each symptom it promises, under its own heading', () => {
  const headings = [...PAGE.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(headings, [
    'Skins or capes do not show',
    '`/hasJoined` says the player has not joined',
    'The LauncherServer cannot reach the service',
    'Logins are refused with 429',
    'The database is unavailable',
  ]);
});

test('every message, reason, outcome, flag and metric it quotes is the program\'s', async () => {
  const src = sources();
  const help = (await runCli(['--help'])).stdout;
  const quoted = [...PAGE.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  let checked = 0;
  for (const q of quoted) {
    const flag = /^(--[a-z-]+)/.exec(q)?.[1];
    if (flag) {
      assert.ok(help.includes(flag), `--help names ${flag}`);
    } else if (/^\d{3} [A-Z]/.test(q) || /^Too many /.test(q) || /^permission denied/.test(q)) {
      // A message: the text with its variable parts (N s) left out, its status dropped.
      const message = q.replace(/^\d{3} /, '');
      const parts = message.split(/\bN\b/).map((p) => p.trim()).filter(Boolean);
      // PostgreSQL's own message is PostgreSQL's: test/e2e/postgres-setup.test.ts meets it.
      if (message.startsWith('permission denied')) continue;
      for (const part of parts) assert.ok(src.includes(part), `src/ holds the message "${part}"`);
    } else if (/^(reason|outcome)":"(\w+)"?$/.test(q) || /^outcome=/.test(q)) {
      const value = /"(\w+)"?$|="(\w+)"/.exec(q)!.slice(1).find(Boolean)!;
      assert.ok(src.includes(`'${value}'`), `src/ has the ${q.split('"')[0]} '${value}'`);
    } else if (/^(auth|http)_\w+/.test(q)) {
      const metric = /^(\w+)/.exec(q)![1]!;
      assert.ok(src.includes(metric), `src/ has the metric ${metric}`);
    } else continue;
    checked++;
  }
  assert.ok(checked >= 20, `${checked} quotes checked`);
});

test('each refusal it lists under 429 answers 429, and each it says answers 503 does', () => {
  const lines = sources().split('\n');
  const section = PAGE.split(/^## /m).find((s) => s.startsWith('Logins are refused with 429'))!;
  const [as429, as503] = section.split(/^Two refusals of the same kind answer \*\*503\*\*/m);
  assert.ok(as503 !== undefined, 'the section names the refusals that answer 503');
  // The status the source gives a message: on its line, else on the next two, a 429 or 503, or the
  // service's kind that the HTTP layer maps to it (src/http/app.ts's STATUS).
  const statusOf = (message: string): number | undefined => {
    const at = lines.findIndex((l) => l.includes(message));
    assert.ok(at >= 0, `src/ holds "${message}"`);
    for (const near of [lines[at]!, lines.slice(at, at + 3).join('\n')]) {
      if (/\b429\b|'throttled'/.test(near)) return 429;
      if (/\b503\b|'busy'/.test(near)) return 503;
    }
    return undefined;
  };
  for (const [text, status] of [[as429!, 429], [as503, 503]] as const) {
    const messages = [...text.matchAll(/^- \*\*`([^`]+)`\*\*/gm)].map((m) => m[1]!.split(/\bN\b/)[0]!.trim());
    assert.ok(messages.length >= 2, `${messages.length} messages listed for ${status}`);
    for (const message of messages) assert.equal(statusOf(message), status, `"${message}" answers ${status}`);
  }
});
