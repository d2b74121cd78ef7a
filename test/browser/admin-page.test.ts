// The admin page as an admin uses it, in the system's Chromium (driven by puppeteer-core) against
// the real built server on a SQLite file: the server's name in the title; a player who is not an
// admin turned away, the page keeping no token; an admin signing in with the keyboard alone; the
// dashboard; finding players by name and by UUID, a page at a time; a player's page with their
// skin and cape drawn from the hosted textures; locking with a reason and unlocking (keyboard
// alone), renaming, a reset link shown once and copied (and working), clearing the skin and the
// cape (keyboard alone), the audit trail, removing a player once their name is typed; invites
// made, listed and revoked (keyboard alone); nothing kept in
// storage or cookies; no error logged (a CSP refusal would be one); and the page at phone and
// desktop widths in light and dark, kept in test/browser/admin-page-{phone,desktop}-{light,dark}.png
// (every step's screenshot goes to a temp folder whose path is printed).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Browser, HTTPRequest } from 'puppeteer-core';
import { CHROMIUM, CHROMIUM_ARGS, colours, contrast, focused, LOOK_CAPE, LOOK_SKIN, textOf, waitForText, waitForView, type Field } from '../helpers/browser.ts';
import { seedPlayers } from '../helpers/players.ts';
import { fetchReply, freePort, startRaw, tempDir, type RawServer } from '../helpers/process.ts';
import { STRINGS } from '../../src/console/strings.ts';
import { VERSION } from '../../src/version.ts';

const SKIP = CHROMIUM ? false : 'Chromium is not installed (apt-get install chromium)';
if (SKIP) console.log(`test/browser/admin-page.test.ts skipped: ${SKIP}`);

const ADMIN_TOKEN = 'browser-admin-page-token-0123456';
const SERVER_NAME = 'Craft & Co';
const PW = 'browser-admin-password';
const PAGED = Array.from({ length: 23 }, (_, i) => `Miner_${String(i).padStart(2, '0')}`);
const fill = (text: string, vars: Record<string, string | number>): string => text.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));

test('the admin page in Chromium: sign-in, dashboard, search, a player\'s page and every action, invites, keyboard, widths and schemes', { skip: SKIP, timeout: 180_000 }, async (t) => {
  const { default: puppeteer } = await import('puppeteer-core');
  const shots = mkdtempSync(join(tmpdir(), 'mcauth-admin-page-'));
  console.log(`admin page screenshots: ${shots}`);
  const { dir, cleanup } = tempDir();
  const db = join(dir, 'mcauth.db');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let server: RawServer | undefined;
  let browser: Browser | undefined;
  t.after(async () => {
    await browser?.close();
    await server?.stop();
    cleanup();
  });

  const uuids = await seedPlayers(db, ['Boss', 'Plain', 'Steve', 'Griefer', ...PAGED], PW);
  server = await startRaw(['serve', '--port', String(port), '--db', db, '--account-page', '--admins', 'Boss', '--admin-token', ADMIN_TOKEN, '--public-url', url, '--server-name', SERVER_NAME, '--registration', 'invite']);
  // Steve wears a hosted skin and cape, put there through the admin API.
  for (const [kind, png] of [['skin', LOOK_SKIN], ['cape', LOOK_CAPE]] as const) {
    const r = await fetchReply(`${url}/admin/users/Steve/${kind}`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'image/png' }, body: png });
    assert.equal(r.status, 200, r.text);
  }

  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, userDataDir: join(dir, 'chromium') });
  await browser.defaultBrowserContext().overridePermissions(url, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  /** What the page sent to the API: its path and its Authorization header. */
  const sent: [string, string | undefined][] = [];
  page.on('request', (r: HTTPRequest) => {
    if (r.url().includes('/account/')) sent.push([new URL(r.url()).pathname, r.headers().authorization]);
  });
  let step = 0;
  const shot = async (name: string, fullPage = true): Promise<void> => {
    step++;
    await page.screenshot({ path: join(shots, `${String(step).padStart(2, '0')}-${name}.png`), fullPage });
  };
  const value = (selector: string): Promise<string> => page.$eval(selector, (e) => (e as Field).value);
  const hidden = (selector: string): Promise<boolean> => page.$eval(selector, (e) => (e as unknown as { hidden: boolean }).hidden);
  /** Types into a field, emptied first. */
  const typeInto = async (selector: string, text: string): Promise<void> => {
    await page.$eval(selector, (e) => void ((e as Field).value = ''));
    await page.type(selector, text);
  };
  /** Moves the focus with Tab alone until it is on `target` (an id, or a button's text), as a keyboard user would. */
  const tabTo = async (target: string): Promise<void> => {
    for (let i = 0; i < 120 && (await focused(page)) !== target; i++) await page.keyboard.press('Tab');
    assert.equal(await focused(page), target, `Tab reaches ${target}`);
  };
  /** The search's results: each player's name. */
  const results = (): Promise<string[]> => page.$$eval('#results li button span:first-child', (list) => list.map((e) => e.textContent ?? ''));
  const openPlayer = async (name: string): Promise<void> => {
    await typeInto('#search-q', name);
    await page.click('#by-name');
    await page.click('#search button[type=submit]');
    await waitForText(page, '#search-msg', fill(STRINGS.foundCount, { count: 1 }));
    await page.click('#results li button');
    await page.waitForFunction((n) => document.getElementById('player-heading').textContent === n && !document.getElementById('player-card').hidden, { timeout: 15_000 }, name);
  };

  await page.setViewport({ width: 390, height: 844 });
  await page.goto(`${url}/admin/`);
  await waitForView(page, 'signed-out');
  assert.equal(await page.title(), `Admin of ${SERVER_NAME}`);
  assert.equal(await textOf(page, 'h1'), `Admin of ${SERVER_NAME}`);
  await shot('sign-in-phone', false);

  await t.test('a player who is not an admin is told so, and the page keeps no token', async () => {
    await typeInto('#signin-name', 'Plain');
    await typeInto('#signin-password', PW);
    await page.click('#signin button[type=submit]');
    await waitForText(page, '#signin-msg', fill(STRINGS.notAdmin, { name: 'Plain' }));
    assert.equal(await page.$eval('#app', (e) => (e as unknown as { dataset: { view: string } }).dataset.view), 'signed-out');
    sent.length = 0;
    await typeInto('#signin-password', 'not-the-password');
    await page.click('#signin button[type=submit]');
    await waitForText(page, '#signin-msg', 'Wrong login or password');
    assert.deepEqual(sent, [['/account/login', undefined]], 'the next call carries no token');
    await shot('not-an-admin', false);
  });

  await t.test('an admin signs in with the keyboard alone, and sees the dashboard', async () => {
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${url}/admin`);
    await waitForView(page, 'signed-out');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'signin-name');
    await page.keyboard.type('boss');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'signin-password');
    await page.keyboard.type(PW);
    await page.keyboard.press('Enter');
    await waitForView(page, 'signed-in');
    assert.equal(await focused(page), 'who');
    assert.equal(await textOf(page, '#who'), fill(STRINGS.signedInAs, { name: 'Boss' }));
    await page.waitForFunction(() => (document.getElementById('dash').textContent ?? '').length > 0, { timeout: 15_000 });
    const dash = await textOf(page, '#dash');
    for (const part of [`${STRINGS.players}${4 + PAGED.length}`, `${STRINGS.database}${db}`, `${STRINGS.version}${VERSION}`, STRINGS.loginsHour, STRINGS.throttled]) assert.ok(dash.includes(part), `${part} in ${dash}`);
    // The first page of every player is listed at once.
    await page.waitForFunction(() => document.querySelectorAll('#results li').length === 20, { timeout: 15_000 });
    // Keyboard on: Tab moves from the sign-out to the dashboard's refresh, and Enter there refreshes.
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'signout');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'refresh');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('dash-form').getAttribute('aria-busy') === null, { timeout: 15_000 });
    await shot('dashboard');
  });

  await t.test('finds players by the start of their name, twenty at a time with More, and by the start of their UUID', async () => {
    await typeInto('#search-q', 'MINER_');
    await page.focus('#search-q');
    await page.keyboard.press('Enter');
    await waitForText(page, '#search-msg', fill(STRINGS.foundCount, { count: 20 }));
    assert.deepEqual(await results(), PAGED.slice(0, 20));
    assert.equal(await hidden('#more'), false);
    await page.click('#more');
    await waitForText(page, '#search-msg', fill(STRINGS.foundCount, { count: PAGED.length }));
    assert.deepEqual(await results(), PAGED);
    assert.equal(await hidden('#more'), true);
    const steve = uuids.get('Steve')!;
    await page.click('#by-uuid');
    await typeInto('#search-q', steve.slice(0, 8).toUpperCase());
    await page.click('#search button[type=submit]');
    await waitForText(page, '#search-msg', fill(STRINGS.foundCount, { count: 1 }));
    assert.deepEqual(await results(), ['Steve']);
    await typeInto('#search-q', 'nobody');
    await page.click('#by-name');
    await page.click('#search button[type=submit]');
    await waitForText(page, '#search-msg', STRINGS.noneFound);
    await shot('search');
  });

  await t.test("a player's page: UUID, dates, status, and the hosted skin and cape as images", async () => {
    await openPlayer('Steve');
    assert.equal(await focused(page), 'player-heading');
    assert.equal(await textOf(page, '#p-uuid'), uuids.get('Steve'));
    assert.equal(await textOf(page, '#p-status'), STRINGS.active);
    assert.equal(await textOf(page, '#p-last'), STRINGS.never);
    await page.waitForFunction(() => [...document.querySelectorAll('.textures img')].every((i) => i.complete && i.naturalWidth === 64) && document.querySelectorAll('.textures img').length === 2, { timeout: 15_000 });
    assert.deepEqual(await page.$$eval('.textures img', (list) => list.map((i) => [i.alt, i.src.startsWith('blob:')])), [[STRINGS.skinImage, true], [STRINGS.capeImage, true]]);
    await shot('player');
  });

  await t.test('locks with a reason and unlocks, with the keyboard alone, each in the audit trail', async () => {
    await tabTo('lock-reason');
    await page.keyboard.type('Griefing at spawn');
    await page.keyboard.press('Enter');
    await waitForText(page, '#lock-msg', STRINGS.lockedDone);
    assert.match(await textOf(page, '#p-status'), /: Griefing at spawn$/);
    assert.equal((await fetchReply(`${url}/account/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Steve', password: PW }) })).status, 403);
    await tabTo('unlock');
    await page.keyboard.press('Enter');
    await waitForText(page, '#lock-msg', STRINGS.unlockedDone);
    assert.equal(await textOf(page, '#p-status'), STRINGS.active);
    const audit = await page.$$eval('#audit li', (list) => list.map((e) => e.textContent ?? ''));
    assert.equal(audit.length, 2);
    assert.match(audit[0]!, /Boss, unlock$/);
    assert.match(audit[1]!, /Boss, lock \(Griefing at spawn\)$/);
  });

  await t.test('renames, and refuses a taken name with the server\'s message', async () => {
    await typeInto('#rename-name', 'plain');
    await page.click('#rename button[type=submit]');
    await waitForText(page, '#rename-msg', 'The name "plain" is taken');
    await typeInto('#rename-name', 'Steve_Two');
    await page.click('#rename button[type=submit]');
    await waitForText(page, '#rename-msg', fill(STRINGS.renamed, { name: 'Steve_Two' }));
    assert.equal(await textOf(page, '#player-heading'), 'Steve_Two');
  });

  await t.test('makes a reset link, shown once with a copy button, that sets a new password', async () => {
    assert.equal(await hidden('#reset-out'), true);
    await page.click('#reset button[type=submit]');
    // Shown before the action ends (the page then reloads what it lists): wait for the whole action.
    await page.waitForFunction(() => !document.getElementById('reset-out').hidden && document.getElementById('reset').getAttribute('aria-busy') === null, { timeout: 15_000 });
    const link = await value('#reset-link');
    assert.match(link, new RegExp(`^${url}/account#reset=[0-9a-f]{32}$`));
    assert.ok(!page.url().includes('reset='), 'the code is in no address');
    await page.click('#reset-copy');
    await waitForText(page, '#reset-msg', STRINGS.copied);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), link);
    const code = link.split('#reset=')[1]!;
    const reset = await fetchReply(`${url}/account/reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code, password: `${PW}-2` }) });
    assert.equal(reset.status, 200, reset.text);
    // Another player's page forgets the link.
    await openPlayer('Griefer');
    assert.equal(await hidden('#reset-out'), true);
    assert.equal(await value('#reset-link'), '');
    await openPlayer('Steve_Two');
  });

  await t.test('clears the skin and the cape, with the keyboard alone', async () => {
    await tabTo('clear-skin');
    await page.keyboard.press('Enter');
    await waitForText(page, '#looks-msg', STRINGS.skinCleared);
    assert.equal(await textOf(page, '#skin-shown'), STRINGS.none);
    await tabTo('clear-cape');
    await page.keyboard.press(' ');
    await waitForText(page, '#looks-msg', STRINGS.capeCleared);
    assert.equal(await textOf(page, '#cape-shown'), STRINGS.none);
    assert.equal(await page.$eval('#clear-skin', (e) => (e as Field).disabled), true);
  });

  await t.test('removes a player only once their name is typed', async () => {
    await openPlayer('Griefer');
    assert.equal(await textOf(page, '#remove-label'), fill(STRINGS.removeConfirm, { name: 'Griefer' }));
    await typeInto('#remove-name', 'Steve_Two');
    await page.click('#remove button[type=submit]');
    await waitForText(page, '#remove-msg', STRINGS.typeName);
    assert.equal(await focused(page), 'remove-name');
    await typeInto('#remove-name', 'griefer');
    await page.click('#remove button[type=submit]');
    await waitForText(page, '#search-msg', fill(STRINGS.removed, { name: 'Griefer' }));
    assert.equal(await hidden('#player-card'), true);
    assert.equal((await fetchReply(`${url}/admin/users/Griefer`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 404);
  });

  await t.test('creates an invite (the link shown once), lists it and revokes it', async () => {
    await typeInto('#invite-uses', '3');
    await typeInto('#invite-days', '2');
    await page.click('#invite button[type=submit]');
    // Shown before the action ends (the page then reloads what it lists): wait for the whole action.
    await page.waitForFunction(() => !document.getElementById('invite-out').hidden && document.getElementById('invite').getAttribute('aria-busy') === null, { timeout: 15_000 });
    const link = await value('#invite-link');
    assert.match(link, new RegExp(`^${url}/account#invite=[0-9a-f]{32}$`));
    const listed = await page.$$eval('#invite-list li span', (list) => list.map((e) => e.textContent ?? ''));
    assert.equal(listed.length, 1);
    assert.match(listed[0]!, /^[0-9a-f]{12}: 3 uses left, expires /);
    const id = listed[0]!.slice(0, 12);
    // Revoked with the keyboard alone: the list's button is reached by Tab.
    await tabTo(fill(STRINGS.revoke, { id }));
    await page.keyboard.press('Enter');
    await waitForText(page, '#invite-msg', fill(STRINGS.revoked, { id }));
    assert.equal(await textOf(page, '#invite-list'), STRINGS.noInvites);
    // Made again, for the screenshots.
    await page.click('#invite button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#invite-list li').length === 1, { timeout: 15_000 });
  });

  await t.test('phone and desktop, light and dark: no sideways scroll, readable text; the token kept nowhere but the script', async () => {
    await openPlayer('Steve_Two');
    // A skin and cape again for the screenshots, and the page shown afresh.
    for (const [kind, png] of [['skin', LOOK_SKIN], ['cape', LOOK_CAPE]] as const) {
      await fetchReply(`${url}/admin/users/Steve_Two/${kind}`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'image/png' }, body: png });
    }
    await typeInto('#search-q', 'Steve');
    await page.click('#search button[type=submit]');
    await waitForText(page, '#search-msg', fill(STRINGS.foundCount, { count: 1 }));
    await page.click('#results li button');
    await page.waitForFunction(() => document.querySelectorAll('.textures img').length === 2 && [...document.querySelectorAll('.textures img')].every((i) => i.complete), { timeout: 15_000 });
    // The logins of this test, counted once the server has written them (every few seconds): Refresh until the dashboard has them.
    const counted = `${STRINGS.loginsHour}${fill(STRINGS.loginCounts, { ok: 2, failed: 2 })}`;
    for (let tries = 0; !(await textOf(page, '#dash')).includes(counted); tries++) {
      assert.ok(tries < 100, `the dashboard says ${await textOf(page, '#dash')}`);
      await page.click('#refresh');
      await page.waitForFunction(() => document.getElementById('dash-form').getAttribute('aria-busy') === null, { timeout: 15_000 });
      await new Promise((r) => setTimeout(r, 200));
    }
    const readable = ['body', 'h1', '#who', 'dt', 'dd', '#player-heading', 'label', '.hint', '#search button[type=submit]', '#signout', '#lock button[type=submit]', '#results li button', 'figcaption'];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      const seen = await colours(page, readable);
      assert.equal(contrast(seen[0]![2], 'rgb(0, 0, 0)') < contrast(seen[0]![2], 'rgb(255, 255, 255)'), scheme === 'dark', `${scheme}: the page's background is ${seen[0]![2]}`);
      for (const [selector, color, background] of seen) {
        assert.ok(contrast(color, background) >= 4.5, `${scheme}: ${selector} is ${color} on ${background}, ${contrast(color, background).toFixed(2)}:1`);
      }
      for (const [width, height, device] of [[390, 844, 'phone'], [1280, 800, 'desktop']] as const) {
        await page.setViewport({ width, height });
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= width, `${scheme}, ${device}: the page scrolls sideways, ${wide} px wide`);
        await shot(`admin-page-${device}-${scheme}`);
        await page.screenshot({ path: join(import.meta.dirname, `admin-page-${device}-${scheme}.png`), fullPage: true });
      }
    }
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    const kept = await page.evaluate(async () => ({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie, dbs: (await indexedDB.databases()).length, caches: (await caches.keys()).length, hash: location.hash }));
    assert.deepEqual(kept, { local: 0, session: 0, cookie: '', dbs: 0, caches: 0, hash: '' });
    // Every call but the sign-in carried the admin's token; the sign-in none.
    assert.ok(sent.length > 10);
    for (const [path, auth] of sent) assert.equal(auth === undefined, path === '/account/login', path);
    // Signing out forgets the player and the token.
    await page.click('#signout');
    await waitForView(page, 'signed-out');
    await waitForText(page, '#signin-msg', STRINGS.signedOut);
    for (const id of ['#who', '#dash', '#results', '#invite-list', '#player-heading']) assert.equal(await textOf(page, id), '', id);
  });

  await t.test("an admin's account page links to the admin page", async () => {
    await page.goto(`${url}/account`);
    await waitForView(page, 'signed-out');
    await typeInto('#signin-name', 'Boss');
    await typeInto('#signin-password', PW);
    await page.click('#signin button[type=submit]');
    await waitForView(page, 'signed-in');
    assert.equal(await hidden('#admin-link'), false);
    await Promise.all([page.waitForNavigation(), page.click('#admin-link a')]);
    assert.equal(page.url(), `${url}/admin/`);
    await waitForView(page, 'signed-out');
  });

  assert.deepEqual(problems, [], 'the page logged no error (a CSP refusal would be one)');
});
