// The account page's HTML: its Content-Security-Policy allows exactly its own script and style,
// it names no other origin, every field has a label, every word comes from strings.ts, and the
// settings are escaped. test/browser/account-page.test.ts drives the same page in Chromium.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { escapeHtml, renderPage, type AccountSettings } from '../../src/account/page.ts';
import { STRINGS } from '../../src/account/strings.ts';

const SETTINGS: AccountSettings = { registration: 'invite', minPasswordLength: 8, basePath: '/mc', serverName: '' };
const page = (over: Partial<AccountSettings> = {}): { html: string; headers: Record<string, string> } => renderPage({ ...SETTINGS, ...over });

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');
const unescape = (text: string): string => text.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');

/** The contents of every `<tag>...</tag>` in the HTML. */
const contents = (html: string, tag: string): string[] => Array.from(html.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g')), (m) => m[1]!);

/** Every start tag: its name and its attributes (values unescaped). */
function tags(html: string): { name: string; attrs: Map<string, string> }[] {
  const markup = html.replace(/<script>[\s\S]*?<\/script>/g, '').replace(/<style>[\s\S]*?<\/style>/g, '');
  return Array.from(markup.matchAll(/<([a-z][a-z0-9]*)((?:\s+[a-z-]+(?:="[^"]*")?)*)\s*>/g), (m) => ({
    name: m[1]!,
    attrs: new Map(Array.from(m[2]!.matchAll(/([a-z-]+)(?:="([^"]*)")?/g), (a) => [a[1]!, unescape(a[2] ?? '')])),
  }));
}

/** The main element's data attributes, unescaped. */
const appData = (html: string): Map<string, string> => tags(html).find((t) => t.attrs.get('id') === 'app')!.attrs;

/** A string of strings.ts as a pattern of the text it makes: its {marks} filled in with anything. */
const asPattern = (value: string): RegExp => new RegExp(`^${value.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '.+')}$`);

const SCRIPT_OF = (html: string): string => contents(html, 'script')[0]!;

test('the CSP allows exactly the inline script and style, by their SHA-256', () => {
  for (const registration of ['off', 'invite', 'open'] as const) {
    const { html, headers } = page({ registration });
    const scripts = contents(html, 'script');
    const styles = contents(html, 'style');
    assert.equal(scripts.length, 1);
    assert.equal(styles.length, 1);
    const csp = headers['content-security-policy']!;
    assert.equal(
      csp,
      `default-src 'none'; script-src 'sha256-${sha256(scripts[0]!)}'; style-src 'sha256-${sha256(styles[0]!)}'; img-src data: blob:; ` +
        `connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
    );
    // A browser turns CR LF into LF before hashing; the texts hold neither CR nor a closing tag.
    assert.doesNotMatch(scripts[0]! + styles[0]!, /\r|<\/(script|style)/i);
  }
});

test('the script and style are the same whatever the settings', () => {
  const a = page({ registration: 'off', minPasswordLength: 12, basePath: '' });
  const b = page({ registration: 'open', minPasswordLength: 8, basePath: '/x', serverName: 'Craftland' });
  assert.equal(a.headers['content-security-policy'], b.headers['content-security-policy']);
  assert.equal(SCRIPT_OF(a.html), SCRIPT_OF(b.html));
});

test('the headers forbid framing, referrers, sniffing and caching', () => {
  const { headers } = page();
  assert.equal(headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.equal(headers['referrer-policy'], 'no-referrer');
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['cache-control'], 'no-store');
});

test('the page names no other origin and loads nothing', () => {
  const { html } = page();
  assert.doesNotMatch(html, /https?:\/\//i);
  assert.doesNotMatch(html, /["'(]\/\//, 'no protocol-relative URL');
  assert.doesNotMatch(html, /@import|url\(/i, 'the style loads nothing');
  for (const { name, attrs } of tags(html)) {
    for (const attr of ['src', 'href', 'action', 'formaction', 'srcset', 'poster', 'data']) {
      const value = attrs.get(attr);
      // A link loads nothing: it may lead to another page of this service (the admin page), by its path.
      const allowed = name === 'a' && attr === 'href' ? /^\/[^/]/ : /^data:/;
      if (value !== undefined) assert.match(value, allowed, `<${name} ${attr}="${value}">`);
    }
    // Inline handlers and style attributes would be refused by the CSP anyway; none is written.
    for (const key of attrs.keys()) assert.doesNotMatch(key, /^on|^style$/, `<${name} ${key}>`);
  }
});

test('every input has a label, and every label a field', () => {
  for (const registration of ['off', 'invite', 'open'] as const) {
    const all = tags(page({ registration }).html);
    const ids = new Set(all.map((t) => t.attrs.get('id')).filter((id) => id !== undefined));
    const labelled = new Set(all.filter((t) => t.name === 'label').map((t) => t.attrs.get('for') ?? ''));
    const inputs = all.filter((t) => t.name === 'input' || t.name === 'select' || t.name === 'textarea');
    assert.ok(inputs.length >= 10);
    for (const input of inputs) {
      const id = input.attrs.get('id');
      assert.ok(id !== undefined && labelled.has(id), `input without a label: ${JSON.stringify([...input.attrs])}`);
    }
    for (const target of labelled) assert.ok(ids.has(target), `label for a missing field: ${target}`);
    assert.equal(ids.size, all.filter((t) => t.attrs.has('id')).length, 'ids are unique');
    for (const form of all.filter((t) => t.name === 'form')) {
      assert.ok(ids.has(`${form.attrs.get('id')}-msg`), `form ${form.attrs.get('id')} has a message of its own`);
    }
  }
});

test('every message has a live region', () => {
  const all = tags(page().html);
  const messages = all.filter((t) => t.attrs.get('class') === 'msg');
  assert.ok(messages.length >= 7);
  for (const m of messages) assert.equal(m.attrs.get('aria-live'), 'polite');
});

test('the sign-up form follows the registration setting', () => {
  const ids = (registration: AccountSettings['registration']): string[] => tags(page({ registration }).html).flatMap((t) => t.attrs.get('id') ?? []);
  assert.ok(!ids('off').some((id) => id.startsWith('signup')));
  assert.ok(ids('open').includes('signup-name'));
  // Open sign-up takes a code past the hourly limit of all: the field is there, and not required.
  assert.ok(ids('open').includes('signup-invite'));
  assert.match(page({ registration: 'open' }).html, /<label for="signup-invite">Invite code \(if you have one\)<\/label>/);
  assert.ok(ids('invite').includes('signup-invite'));
  assert.match(page({ registration: 'invite' }).html, /<label for="signup-invite">Invite code<\/label>/);
  assert.match(page({ minPasswordLength: 12 }).html, /minlength="12"/);
});

test('every word shown comes from strings.ts, and every string there is used', () => {
  const { html } = page();
  const script = SCRIPT_OF(html);
  const sent: Record<string, string> = JSON.parse(appData(html).get('data-strings')!);
  const used = new Set(Array.from(script.matchAll(/\bS\.(\w+)/g), (m) => m[1]!));
  const values = Object.values(STRINGS) as string[];
  const shown = (text: string): boolean => values.some((v) => asPattern(v).test(text));

  for (const key of used) assert.ok(Object.hasOwn(STRINGS, key), `the script reads S.${key}, which strings.ts lacks`);
  assert.deepEqual(Object.keys(sent).sort(), [...used].sort(), 'data-strings holds exactly what the script reads');
  for (const [key, value] of Object.entries(sent)) assert.equal(value, STRINGS[key as keyof typeof STRINGS]);

  const markup = html.replace(/<script>[\s\S]*?<\/script>/g, '').replace(/<style>[\s\S]*?<\/style>/g, '');
  const texts = markup
    .split(/<[^>]*>/)
    .map((t) => unescape(t).trim())
    .filter((t) => t !== '');
  for (const text of texts) assert.ok(shown(text), `text not from strings.ts: ${text}`);
  for (const { attrs } of tags(html)) {
    for (const attr of ['aria-label', 'title', 'placeholder', 'alt', 'lang']) {
      const value = attrs.get(attr);
      if (value !== undefined) assert.ok(shown(value), `${attr} not from strings.ts: ${value}`);
    }
  }
  // Open sign-up's page shows the invite field's words of its own, a named server's its title.
  const open = page({ registration: 'open', serverName: 'Craftland' }).html;
  const openTexts = open.split(/<[^>]*>/).map((t) => unescape(t).trim());
  for (const [key, value] of Object.entries(STRINGS)) {
    const inMarkup = [...texts, ...openTexts].some((t) => asPattern(value).test(t));
    const inAttr = markup.includes(`"${escapeHtml(value)}"`);
    assert.ok(inMarkup || inAttr || used.has(key), `strings.ts has ${key}, which the page never shows`);
  }
  // The script's own literals are identifiers, paths and types, never a sentence.
  for (const [literal] of script.matchAll(/'(?:[^'\\\n]|\\.)*'/g)) {
    if (literal === "'use strict'") continue;
    assert.doesNotMatch(literal, /[A-Za-z]{2,} +[A-Za-z]{2,}/, `English in the script: ${literal}`);
  }
});

test('the settings are escaped and reach the script unchanged', () => {
  const basePath = `/a"><script>alert(1)</script>&'`;
  const { html } = renderPage({ registration: 'open', minPasswordLength: 10, basePath, serverName: '' });
  assert.ok(!html.includes('<script>alert'));
  assert.equal(contents(html, 'script').length, 1);
  const data = appData(html);
  assert.equal(data.get('data-base'), basePath);
  assert.equal(data.get('data-registration'), 'open');
  assert.equal(data.get('data-min-password'), '10');
  assert.equal(escapeHtml(`<&>"'`), '&#60;&#38;&#62;&#34;&#39;');
  // The JSON of the strings is an attribute too: its quotes and brackets are escaped.
  const raw = /data-strings="([^"]*)"/.exec(html)![1]!;
  assert.doesNotMatch(raw, /[<>"']/);
});

test('the server name is in the title and the heading, as text; without one, both say "Your account"', () => {
  const heading = (html: string): [string, string] => [unescape(contents(html, 'title')[0]!), unescape(contents(html, 'h1')[0]!)];
  assert.deepEqual(heading(page().html), [STRINGS.title, STRINGS.title]);
  assert.deepEqual(heading(page({ serverName: 'Craftland' }).html), ['Your account on Craftland', 'Your account on Craftland']);
  // Owner input: markup and quotes stay text, and a replacement pattern ($&) is not expanded.
  const name = `<script>alert("x")</script> & 'Co' $&`;
  const { html } = page({ serverName: name });
  assert.deepEqual(heading(html), [`Your account on ${name}`, `Your account on ${name}`]);
  assert.equal(contents(html, 'script').length, 1, 'no script but the page\'s own');
  assert.ok(!html.includes('<script>alert'));
});
