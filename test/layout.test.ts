// The layout table in docs/layout.md against the code: each part of src/ with its lines of code (blank and
// comment-only lines not counted), the core an auditor reads for the five endpoints held to its
// budget, and every file of src/ in exactly one part.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/process.ts';

const LAYOUT = join(ROOT, 'docs', 'layout.md');

/** The core: HTTP basics, the service's rules, the store, password and token crypto, and the limits they share. */
const CORE = ['src/http/', 'src/service/', 'src/store/', 'src/crypto/', 'src/limits.ts', 'src/uuid.ts', 'src/json-shape.ts'];
const CORE_BUDGET = 1800;

/** The parts the table in docs/layout.md lists, in its order: a folder (ending in /) or files joined by ", ". */
const PARTS = [
  'src/http/',
  'src/service/',
  'src/store/',
  'src/crypto/',
  'src/limits.ts, src/uuid.ts, src/json-shape.ts',
  'src/areas/',
  'src/textures/',
  'src/admin/',
  'src/account/',
  'src/console/',
  'src/invites/',
  'src/yggdrasil/',
  'src/ops/',
  'src/cli/',
  'src/import/',
  'src/memory/',
  'src/postgres/',
  'src/server.ts, src/serve.ts, src/connections.ts, src/runtime.ts, src/version.ts, src/sea.ts',
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

/** Lines that hold code: not blank, not only a comment (`//`, or a line of a `/* ... *\/` block). */
function codeLines(text: string): number {
  return text.split('\n').filter((line) => !/^\s*($|\/\/|\/\*|\*)/.test(line)).length;
}

const count = (paths: string[]): number => paths.reduce((n, p) => n + codeLines(readFileSync(join(ROOT, p), 'utf8')), 0);
const inPart = (part: string, file: string): boolean => part.split(', ').some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));

test('every file of src/ is in exactly one part of the layout', () => {
  for (const file of files(join(ROOT, 'src'))) {
    assert.equal(PARTS.filter((part) => inPart(part, file)).length, 1, file);
  }
});

test(`the core stays within ${CORE_BUDGET} lines of code`, () => {
  const core = count(files(join(ROOT, 'src')).filter((f) => CORE.some((c) => inPart(c, f))));
  assert.ok(core <= CORE_BUDGET, `the core has ${core} lines of code`);
  assert.match(readFileSync(LAYOUT, 'utf8'), new RegExp(`The core[^\\n]* ${core.toLocaleString('en')} lines of code`));
});

test("docs/layout.md's table gives each part's lines of code", () => {
  const layout = readFileSync(LAYOUT, 'utf8');
  const all = files(join(ROOT, 'src'));
  for (const part of PARTS) {
    const lines = count(all.filter((f) => inPart(part, f)));
    const cell = part.split(', ').map((p) => `\`${p}\``).join(', ');
    assert.ok(layout.includes(`| ${cell} | ${lines} |`), `docs/layout.md: | ${cell} | ${lines} |`);
  }
});
