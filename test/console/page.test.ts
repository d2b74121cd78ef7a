// The admin page's HTML: its Content-Security-Policy allows exactly its own script and style (the
// account page's headers), the same whatever the settings; every control has a label; every word
// the script shows comes from strings.ts; the server's name is escaped. test/browser/admin-page.test.ts
// drives the same page in Chromium.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { renderAdminPage } from '../../src/console/page.ts';
import { STRINGS } from '../../src/console/strings.ts';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');
const contents = (html: string, tag: string): string[] => Array.from(html.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g')), (m) => m[1]!);

test('the CSP allows exactly the inline script and style, by their SHA-256, with the account page\'s headers', () => {
  const { html, headers } = renderAdminPage({ basePath: '/mc', serverName: '' });
  const [script, style] = [contents(html, 'script'), contents(html, 'style')];
  assert.equal(script.length, 1);
  assert.equal(style.length, 1);
  assert.equal(
    headers['content-security-policy'],
    `default-src 'none'; script-src 'sha256-${sha256(script[0]!)}'; style-src 'sha256-${sha256(style[0]!)}'; img-src data: blob:; ` +
      `connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
  );
  assert.doesNotMatch(script[0]! + style[0]!, /\r|<\/(script|style)/i);
  assert.deepEqual(
    [headers['x-frame-options'], headers['cache-control'], headers['x-content-type-options'], headers['referrer-policy'], headers['content-type']],
    ['DENY', 'no-store', 'nosniff', 'no-referrer', 'text/html; charset=utf-8'],
  );
});

test('the script and style are the same whatever the settings; the base path and server name reach the page escaped', () => {
  const a = renderAdminPage({ basePath: '', serverName: '' });
  const b = renderAdminPage({ basePath: '/x"y', serverName: `<script>alert(1)</script> & "Co"` });
  assert.equal(a.headers['content-security-policy'], b.headers['content-security-policy']);
  assert.match(b.html, /<title>Admin of &#60;script&#62;alert\(1\)&#60;\/script&#62; &#38; &#34;Co&#34;<\/title>/);
  assert.match(b.html, /data-base="\/x&#34;y"/);
  assert.equal(contents(b.html, 'script').length, 1);
  assert.match(a.html, /<title>Admin<\/title>/);
});

test('every string the script reads is in strings.ts, and every control has a label', () => {
  const { html } = renderAdminPage({ basePath: '', serverName: '' });
  const script = contents(html, 'script')[0]!;
  for (const [, key] of script.matchAll(/\bS\.(\w+)/g)) assert.ok(Object.hasOwn(STRINGS, key!), `S.${key}`);
  const markup = html.replace(/<script>[\s\S]*?<\/script>/, '');
  const labelled = new Set(Array.from(markup.matchAll(/<label for="([^"]+)"/g), (m) => m[1]));
  const controls = Array.from(markup.matchAll(/<input id="([^"]+)"/g), (m) => m[1]);
  assert.ok(controls.length >= 10);
  for (const id of controls) assert.ok(labelled.has(id), `#${id} has a label`);
  // Radio buttons sit inside their label.
  for (const id of ['by-name', 'by-uuid']) assert.match(markup, new RegExp(`<label for="${id}"><input type="radio" id="${id}"`));
  // Buttons say what they do: none is empty (the list's are made with their text in the script).
  for (const [, text] of markup.matchAll(/<button[^>]*>([^<]*)<\/button>/g)) assert.notEqual(text!.trim(), '');
});

test('the page names no other origin and keeps no token anywhere but the script\'s closure', () => {
  const { html } = renderAdminPage({ basePath: '', serverName: '' });
  assert.doesNotMatch(html, /https?:\/\//);
  const script = contents(html, 'script')[0]!;
  assert.doesNotMatch(script, /localStorage|sessionStorage|document\.cookie|indexedDB|history\.|location\.(hash|search) *=/);
});
