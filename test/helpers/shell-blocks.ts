// What the tests that run the README's and docs/'s shell blocks share: the blocks of a page, and
// a folder laid out as the blocks expect a reader's checkout after the build.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { SERVER_JS, tempDir } from './process.ts';

/** The ```sh blocks of a Markdown text, in order; one indented in a list item, without its indent. */
export const shellBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, text]) => text!.replace(new RegExp(`^${indent}`, 'gm'), ''));

/** `text` as a pattern that matches it literally, for a shown answer with a placeholder in it. */
export const literalPattern = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether curl, which the blocks' HTTP sessions use, is installed here. */
export const hasCurl = spawnSync('curl', ['--version']).status === 0;

/** A fresh temp folder holding only dist/server.js (the suite's own build), as the blocks say `node dist/server.js`. */
export function builtCheckout(): { dir: string; cleanup: () => void } {
  const tmp = tempDir();
  mkdirSync(join(tmp.dir, 'dist'));
  copyFileSync(SERVER_JS, join(tmp.dir, 'dist', 'server.js'));
  return tmp;
}

/** PATH with the Node running this test first (`node` in a block, as on an owner's PATH), then `dirs`, then the test's own. */
export const blockPath = (...dirs: string[]): string => [dirname(process.execPath), ...dirs, process.env.PATH ?? ''].join(delimiter);
