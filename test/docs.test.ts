// The README and docs/: the README stays one screen to a logged-in player and links every page of
// docs/; every relative link in them reaches a file, and every #anchor a heading of that file;
// the configuration page names every flag, environment variable and config key the program has,
// so the page cannot drift from the code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { envName, SERVE_OPTIONS } from '../src/cli/options.ts';
import { childEnv, ROOT, SERVER_JS } from './helpers/process.ts';

const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const PAGES = readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f));
const read = (path: string): string => readFileSync(path, 'utf8');
/** The README's budget: what an owner reads before the first login. */
const README_MAX_LINES = 200;

/** Markdown text without its fenced code blocks, where `[x](y)` is code, not a link. */
const prose = (text: string): string => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');

/** Every link target of `[text](target)` outside code blocks. */
const links = (text: string): string[] => [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a file's headings (outside code blocks, where `#` starts a comment). */
const anchors = (text: string): Set<string> => new Set([...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));

describe('the README', () => {
  // Rule: the README is one screen to a logged-in player; the rest lives in docs/.
  test(`is under ${README_MAX_LINES} lines`, () => {
    const lines = read(README).split('\n').length;
    assert.ok(lines < README_MAX_LINES, `README.md has ${lines} lines`);
  });

  // Rule: no page of docs/ is an orphan: the README's table reaches each.
  test('links every page in docs/', () => {
    const targets = new Set(links(read(README)).map((l) => l.split('#')[0]));
    for (const page of PAGES) assert.ok(targets.has(relative(ROOT, page)), `README.md links ${relative(ROOT, page)}`);
  });
});

describe('links in the README and docs/', () => {
  for (const file of [README, ...PAGES]) {
    // Rule: a relative link reaches an existing file, and its #anchor a heading there.
    test(`${relative(ROOT, file)}: every relative link reaches a file and heading`, () => {
      for (const link of links(read(file))) {
        if (/^[a-z]+:/.test(link)) continue; // https:, mailto: and the like: not ours to check
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : join(dirname(file), path);
        assert.ok(existsSync(target), `${relative(ROOT, file)}: ${link} (no file ${relative(ROOT, target)})`);
        if (anchor !== undefined) assert.ok(anchors(read(target)).has(anchor), `${relative(ROOT, file)}: ${link} (no heading #${anchor} in ${relative(ROOT, target)})`);
      }
    });
  }

  // The checks can fail: a missing file and a missing heading are found.
  test('the link checks find what is missing', () => {
    assert.deepEqual(links('[a](docs/nowhere.md) `[b](c)`\n```\n[d](e)\n```\n'), ['docs/nowhere.md', 'c']);
    assert.equal(slug('Accounts: sign-up, the account page, resets'), 'accounts-sign-up-the-account-page-resets');
    assert.ok(!anchors('# Title\n```sh\n# a comment\n```\n').has('a-comment'));
  });
});

describe('docs/configuration.md', () => {
  const page = read(join(DOCS, 'configuration.md'));
  const help = spawnSync(process.execPath, [SERVER_JS, '--help'], { env: childEnv(), encoding: 'utf8', timeout: 15_000 });

  // Rule: every flag --help prints (the server's options and the commands' own) is on the page.
  test('names every flag that --help prints', () => {
    assert.equal(help.status, 0, help.stderr);
    const flags = new Set([...help.stdout.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]));
    assert.ok(flags.size > 40, `--help printed only ${flags.size} flags`);
    for (const flag of flags) assert.match(page, new RegExp(`(?<![\\w-])${flag}(?![\\w-])`), `configuration.md names ${flag}`);
  });

  // Rule: every environment variable --help or the options define is on the page.
  test('names every environment variable', () => {
    const vars = new Set([...help.stdout.matchAll(/\b(MCAUTH_[A-Z_]+|PG[A-Z]+|LISTEN_[A-Z]+)\b/g)].map((m) => m[1]!));
    for (const option of SERVE_OPTIONS) vars.add(envName(option.flag));
    vars.add(envName('config'));
    for (const name of vars) assert.match(page, new RegExp(`\\b${name}\\b`), `configuration.md names ${name}`);
  });

  // Rule: every key a config file may hold (each option's camelCase name) is on the page.
  test('names every config-file key', () => {
    for (const option of SERVE_OPTIONS) assert.ok(page.includes(`\`${option.key}\``), `configuration.md names the key ${option.key}`);
  });
});
