// The account page as a person uses it, in the system's Chromium (driven by puppeteer-core)
// against the real built server: the server's name as the title, an invite link, sign-up, dates
// in the player's locale and time zone, a skin (front and back) and a cape previewed before they
// are sent and then saved, a password change, signing out everywhere, a reset link, a launcher's
// login with the password set there, the keyboard alone, the token kept in the page's memory
// only, signing out of the page alone, and the signed-in page at phone and desktop widths in
// light and dark. Every step leaves a screenshot in a temp folder whose path is printed; the
// last four are kept in test/browser/account-page-{phone,desktop}-{light,dark}.png.
// Chromium is found as .ci/run finds it (chromium or chromium-browser on the PATH, else
// /usr/bin/chromium); without one the test is skipped, and says so.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import {
  BLUE, BROWN, CHROMIUM, CHROMIUM_ARGS, CLEAR, colours, contrast, CYAN, focused, GREEN, GREY, LIME, LOOK_CAPE, LOOK_SKIN, MAGENTA, NAVY, OLIVE, ORANGE, paintedPng, PINK, RED, textOf, waitForText, waitForView, WHITE, YELLOW,
  type Field, type Rgba,
} from '../helpers/browser.ts';
import { fetchReply, freePort, runCli, startRaw, tempDir, type RawServer } from '../helpers/process.ts';
import { STRINGS } from '../../src/account/strings.ts';

const SKIP = CHROMIUM ? false : 'Chromium is not installed (apt-get install chromium)';
if (SKIP) console.log(`test/browser/account-page.test.ts skipped: ${SKIP}`);

const ADMIN_TOKEN = 'browser-test-admin-token';
/** The server runs with an API key, as for a LauncherServer on another host: the page needs none, the five endpoints do. */
const API_KEY = 'browser-test-api-key';
/** The --server-name: owner input, shown as text in the title and heading (the CSP would stop a script anyway). */
const SERVER_NAME = `<script>document.title = "pwned"</script> "Craft" & 'Co'`;
const NAME = 'Steve_Web';
const FIRST = 'first-password-1';
const SECOND = 'second-password-2';
/** Set from the reset link; in mixed case, so that a page that changed a password on its way would not log a launcher in. */
const THIRD = 'Third-Password-3';
/** A second player, who signs up and changes the password with the keyboard alone. */
const KEYS_NAME = 'Alex_Keys';
const KEYS_FIRST = 'keys-password-1';
const KEYS_SECOND = 'keys-password-2';
/** The player's locale and time zone, as the browser is told them: the page's dates follow them. */
const LOCALE = 'en-GB';
const TIME_ZONE = 'Asia/Tokyo';
/** The date as the player should read it, from Node's own Intl in that locale and zone: day before month, 24-hour clock, the zone named. */
const DATE_SHOWN = new Intl.DateTimeFormat(LOCALE, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short', timeZone: TIME_ZONE });
/** The server's 401 for a wrong current password (docs/http.md, "The account API"): no text of the page's. */
const WRONG_CURRENT = 'The current password is wrong';
/** The server's 401 for a wrong password at sign-in. */
const WRONG_LOGIN = 'Wrong login or password';

/**
 * A 64×64 skin whose front and back faces each have a colour of their own (the standard layout),
 * a hat whose top row is white, front and back, and a jacket whose back has a white bottom row:
 * the previews must put each where the game shows it.
 */
const SKIN = paintedPng(64, 64, [
  [8, 8, 8, 8, RED], // head
  [40, 8, 8, 1, WHITE], // hat, top row
  [20, 20, 8, 12, GREEN], // body
  [44, 20, 4, 12, BLUE], // right arm
  [36, 52, 4, 12, YELLOW], // left arm
  [4, 20, 4, 12, MAGENTA], // right leg
  [20, 52, 4, 12, CYAN], // left leg
  [24, 8, 8, 8, BROWN], // head, back
  [56, 8, 8, 1, WHITE], // hat, back, top row
  [32, 20, 8, 12, NAVY], // body, back
  [32, 47, 8, 1, WHITE], // jacket, back, bottom row
  [52, 20, 4, 12, OLIVE], // right arm, back
  [44, 52, 4, 12, PINK], // left arm, back
  [12, 20, 4, 12, LIME], // right leg, back
  [28, 52, 4, 12, GREY], // left leg, back
]);
/** Where each colour lands in the 16×32 front view (classic arms), and a spot left empty. */
const SKIN_FRONT: [number, number, Rgba][] = [
  [8, 4, RED],
  [8, 0, WHITE],
  [8, 14, GREEN],
  [2, 14, BLUE],
  [13, 14, YELLOW],
  [5, 26, MAGENTA],
  [10, 26, CYAN],
  [1, 2, CLEAR],
];
/** The same in the back view: seen from behind, the right arm and leg are on the viewer's right. */
const SKIN_BACK: [number, number, Rgba][] = [
  [8, 4, BROWN],
  [8, 0, WHITE],
  [8, 14, NAVY],
  [8, 19, WHITE],
  [13, 14, OLIVE],
  [2, 14, PINK],
  [10, 26, LIME],
  [5, 26, GREY],
  [1, 2, CLEAR],
];
/**
 * An old 64×32 skin: its left limbs are its right ones mirrored, so the right arm's back, whose
 * first column only is painted, shows that column at the arm's outer edge on both sides.
 */
const LEGACY_SKIN = paintedPng(64, 32, [
  [8, 8, 8, 8, RED],
  [24, 8, 8, 8, BROWN],
  [52, 20, 1, 12, OLIVE],
]);
const LEGACY_BACK: [number, number, Rgba][] = [
  [8, 4, BROWN],
  [12, 14, OLIVE],
  [15, 14, CLEAR],
  [3, 14, OLIVE],
  [0, 14, CLEAR],
];

/** A 64×32 cape whose front (10×16 at 1, 1) is orange. */
const CAPE = paintedPng(64, 32, [[1, 1, 10, 16, ORANGE]]);

/** The canvas's size and the colour of the 8×8 block at each skin pixel asked for. */
async function canvasPixels(page: Page, id: string, at: [number, number][]): Promise<{ width: number; height: number; pixels: Rgba[]; drawn: number }> {
  return page.evaluate(
    (canvasId, spots) => {
      const canvas = document.getElementById(canvasId);
      const data: Uint8ClampedArray = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let drawn = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) drawn++;
      // No named function in here: tsx would wrap it in a helper the page does not have.
      const pixels = spots.map(([x, y]) => {
        const at = ((y * 8 + 4) * canvas.width + x * 8 + 4) * 4;
        return Array.from(data.subarray(at, at + 4));
      });
      return { width: canvas.width, height: canvas.height, pixels: pixels as Rgba[], drawn };
    },
    id,
    at,
  );
}

/**
 * Chooses `file` in the file input `selector` and waits until its preview is drawn. The page says
 * so in the preview note, set last when the previews are drawn; the note is cleared first, since
 * after another chosen file it already says the same (R32: the second of two files was read from
 * the canvas before it was drawn).
 */
async function choose(page: Page, selector: string, file: string): Promise<void> {
  await page.$eval('#preview-note', (e) => {
    e.textContent = '';
  });
  await (await page.$(selector))!.uploadFile(file);
  await waitForText(page, '#preview-note', STRINGS.previewPending);
}

/** The link a CLI command printed (invite or reset). */
function linkIn(stdout: string, kind: 'invite' | 'reset'): string {
  const m = new RegExp(`http://\\S+#${kind}=\\S+`).exec(stdout);
  assert.ok(m, `no ${kind} link in: ${stdout}`);
  return m[0];
}

test('the account page in Chromium: invite, sign-up, skin and cape, password, sign-out everywhere, reset, keyboard', { skip: SKIP, timeout: 180_000 }, async (t) => {
  const { default: puppeteer } = await import('puppeteer-core');
  const shots = mkdtempSync(join(tmpdir(), 'mcauth-account-page-'));
  console.log(`account page screenshots: ${shots}`);
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

  server = await startRaw(['serve', '--port', String(port), '--db', db, '--account-page', '--registration', 'invite', '--public-url', url, '--admin-token', ADMIN_TOKEN, '--api-key', API_KEY, '--server-name', SERVER_NAME]);
  /** A JSON POST from the test itself, as any HTTP client sends it. */
  const post = (path: string, body: unknown) => fetchReply(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  /** A call as a LauncherServer makes it: JSON to one of the five endpoints, the API key in the query as its config carries it. */
  const launcher = (endpoint: string, body: unknown) => post(`/${endpoint}?key=${API_KEY}`, body);
  // The CLI takes the public URL (for the links it prints) from the environment, as a service manager would give it.
  const cliEnv = { MCAUTH_PUBLIC_URL: url };
  const invite = await runCli(['invite', 'create', '--db', db], { env: cliEnv });
  assert.equal(invite.code, 0, invite.stderr);
  const inviteLink = linkIn(invite.stdout, 'invite');
  assert.ok(inviteLink.startsWith(`${url}/account#invite=`), inviteLink);

  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, userDataDir: join(dir, 'chromium') });
  const page = await browser.newPage();
  await page.emulateTimezone(TIME_ZONE);
  await (await page.createCDPSession()).send('Emulation.setLocaleOverride', { locale: LOCALE });
  // Anything the page logs as an error (a CSP refusal, a script error) fails the test at the end;
  // not Chromium's note on each refusal the test asks for (a 401 for a wrong password).
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  let step = 0;
  const shot = async (name: string, fullPage = true): Promise<void> => {
    step++;
    await page.screenshot({ path: join(shots, `${String(step).padStart(2, '0')}-${name}.png`), fullPage });
  };

  // The sign-in page, on a phone and on a desktop.
  await page.setViewport({ width: 360, height: 740 });
  await page.goto(`${url}/account`);
  await waitForView(page, 'signed-out');
  // The server's name, as text, in the title and the heading.
  assert.equal(await page.title(), `Your account on ${SERVER_NAME}`);
  assert.equal(await textOf(page, 'h1'), `Your account on ${SERVER_NAME}`);
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= 360, `the phone page scrolls sideways: ${scrollWidth} px wide`);
  await shot('sign-in-phone', false);
  await page.setViewport({ width: 1280, height: 800 });
  await shot('sign-in-desktop', false);

  await t.test('an invite link opens the sign-up form with its code, then takes the code out of the address', async () => {
    await page.goto(inviteLink);
    await waitForView(page, 'signed-out');
    assert.equal(await page.$eval('#signup-invite', (e) => (e as Field).value), inviteLink.split('#invite=')[1]);
    assert.equal(await focused(page), 'signup-name');
    assert.equal(await page.evaluate(() => location.hash), '');
    await shot('invite-link');
  });

  await t.test('signing up signs in at once', async () => {
    await page.type('#signup-name', NAME);
    await page.type('#signup-password', FIRST);
    await page.type('#signup-repeat', FIRST + 'x');
    await page.click('#signup button[type=submit]');
    await waitForText(page, '#signup-msg', STRINGS.passwordsDiffer);
    await shot('sign-up-passwords-differ');
    await page.$eval('#signup-repeat', (e) => ((e as Field).value = ''));
    await page.type('#signup-repeat', FIRST);
    await page.click('#signup button[type=submit]');
    await waitForView(page, 'signed-in');
    assert.equal(await textOf(page, '#me-heading'), STRINGS.signedInAs.replace('{name}', NAME));
    assert.match(await textOf(page, '#me-uuid'), /^[0-9a-f]{8}-?[0-9a-f]{4}/);
    // The dates in the player's locale and time zone, the zone named, each in a <time> holding its instant.
    const login = await post('/account/login', { name: NAME, password: FIRST });
    const me = (await fetchReply(`${url}/account/me`, { headers: { authorization: `Bearer ${login.body.result.accessToken}` } })).body.result;
    assert.equal(await page.$eval('#me-created time', (e) => e.getAttribute('datetime')), me.createdAt);
    for (const id of ['me-created', 'me-last']) {
      const [instant, shown] = await page.$eval(`#${id} time`, (e) => [e.getAttribute('datetime')!, e.textContent ?? '']);
      assert.equal(shown.replace(/\s/g, ' '), DATE_SHOWN.format(new Date(instant)).replace(/\s/g, ' '), `${id} in ${LOCALE}, ${TIME_ZONE}`);
      assert.match(shown, /GMT\+9$/, `${id} names its time zone`);
    }
    await shot('signed-in');
  });

  await t.test('a skin is previewed from the file before it is sent, then saved', async () => {
    const skinFile = join(dir, 'skin.png');
    writeFileSync(skinFile, SKIN);
    const legacyFile = join(dir, 'legacy-skin.png');
    writeFileSync(legacyFile, LEGACY_SKIN);
    // An old 64×32 skin's back: its left arm is the right one mirrored.
    await choose(page, '#skin-file', legacyFile);
    assert.deepEqual((await canvasPixels(page, 'skin-back', LEGACY_BACK.map(([x, y]) => [x, y]))).pixels, LEGACY_BACK.map(([, , colour]) => colour));
    await shot('legacy-skin-preview');
    await choose(page, '#skin-file', skinFile);
    const before = await canvasPixels(page, 'skin-preview', SKIN_FRONT.map(([x, y]) => [x, y]));
    assert.equal(before.width, 16 * 8);
    assert.equal(before.height, 32 * 8);
    assert.ok(before.drawn > 0, 'the preview is drawn');
    assert.deepEqual(before.pixels, SKIN_FRONT.map(([, , colour]) => colour));
    // Its back, in the canvas beside it, from the back faces, the overlay layer's too.
    const behind = await canvasPixels(page, 'skin-back', SKIN_BACK.map(([x, y]) => [x, y]));
    assert.deepEqual([behind.width, behind.height], [16 * 8, 32 * 8]);
    assert.deepEqual(behind.pixels, SKIN_BACK.map(([, , colour]) => colour));
    // Slim arms are 3 pixels wide: the outer column of the right arm is left empty.
    await page.click('#skin-slim');
    assert.deepEqual((await canvasPixels(page, 'skin-preview', [[0, 14], [1, 14], [15, 14]])).pixels, [CLEAR, BLUE, CLEAR]);
    await page.click('#skin-classic');
    await shot('skin-preview');

    await page.click('#skin button[type=submit]');
    await waitForText(page, '#skin-msg', STRINGS.skinSaved);
    await waitForText(page, '#preview-note', STRINGS.previewSaved);
    // The saved skin is fetched back from the server's /textures/ and drawn the same.
    const after = await canvasPixels(page, 'skin-preview', SKIN_FRONT.map(([x, y]) => [x, y]));
    assert.deepEqual(after.pixels, SKIN_FRONT.map(([, , colour]) => colour));
    assert.deepEqual((await canvasPixels(page, 'skin-back', SKIN_BACK.map(([x, y]) => [x, y]))).pixels, SKIN_BACK.map(([, , colour]) => colour));
    await shot('skin-saved');

    const login = await fetchReply(`${url}/account/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: NAME, password: FIRST }) });
    assert.equal(login.status, 200, login.text);
    const me = await fetchReply(`${url}/account/me`, { headers: { authorization: `Bearer ${login.body.result.accessToken}` } });
    assert.equal(me.status, 200, me.text);
    assert.match(me.body.result.skinUrl, new RegExp(`^${url}/textures/[0-9a-f]{64}$`));
    assert.equal(me.body.result.isAlex, false);
  });

  await t.test('a cape is previewed beside the skin, saved and removed', async () => {
    const capeFile = join(dir, 'cape.png');
    writeFileSync(capeFile, CAPE);
    await choose(page, '#cape-file', capeFile);
    const cape = await canvasPixels(page, 'cape-preview', [[0, 0], [5, 8], [9, 15]]);
    assert.deepEqual([cape.width, cape.height], [10 * 8, 16 * 8]);
    assert.deepEqual(cape.pixels, [ORANGE, ORANGE, ORANGE]);
    await shot('cape-preview');
    await page.click('#cape button[type=submit]');
    await waitForText(page, '#cape-msg', STRINGS.capeSaved);
    assert.equal(await page.$eval('#cape-remove', (e) => (e as Field).disabled), false);
    await shot('cape-saved');
    await page.click('#cape-remove');
    await waitForText(page, '#cape-msg', STRINGS.capeRemoved);
    assert.equal((await canvasPixels(page, 'cape-preview', [[5, 8]])).drawn, 0);
    assert.equal(await page.$eval('#cape-remove', (e) => (e as Field).disabled), true);
  });

  await t.test('a skin saved with slim arms, switched back to classic, then removed: the page and the server agree', async () => {
    const uuid = await textOf(page, '#me-uuid');
    /** The player as /profile tells a game server: its skin and arms, or none. */
    const profile = async () => {
      const r = await launcher('profile', { userUUID: uuid });
      assert.equal(r.status, 200, r.text);
      return r.body.result;
    };
    /** Chooses the skin's file again (the arms go with an upload), picks the arms and saves. */
    const saveSkin = async (model: 'slim' | 'classic') => {
      await choose(page, '#skin-file', join(dir, 'skin.png'));
      await page.click(`#skin-${model}`);
      await page.click('#skin button[type=submit]');
      await waitForText(page, '#skin-msg', STRINGS.skinSaved);
      await waitForText(page, '#preview-note', STRINGS.previewSaved);
    };
    // After a save the page shows the arms the server answered with (the radio is set from its
    // answer, the preview drawn from /textures/ with them), and /profile gives the game the same.
    await saveSkin('slim');
    assert.equal(await page.$eval('#skin-slim', (e) => (e as Field).checked), true, 'the page shows slim arms saved');
    assert.deepEqual((await canvasPixels(page, 'skin-preview', [[0, 14], [1, 14]])).pixels, [CLEAR, BLUE]);
    assert.equal((await profile()).isAlex, true, 'the game is told of slim arms');
    await shot('skin-slim-saved');
    await saveSkin('classic');
    assert.equal(await page.$eval('#skin-classic', (e) => (e as Field).checked), true, 'the page shows classic arms saved');
    assert.deepEqual((await canvasPixels(page, 'skin-preview', [[0, 14], [1, 14]])).pixels, [BLUE, BLUE]);
    assert.equal((await profile()).isAlex, false, 'the game is told of classic arms');
    await shot('skin-classic-again');
    // Only the arms, no new file: the preview says it is not saved yet; saving sends the saved skin again with them.
    const skinUrl = (await profile()).skinUrl;
    await page.click('#skin-slim');
    await waitForText(page, '#preview-note', STRINGS.armsPending);
    assert.deepEqual((await canvasPixels(page, 'skin-preview', [[0, 14], [1, 14]])).pixels, [CLEAR, BLUE], 'the preview has the arms chosen');
    await shot('skin-arms-pending');
    await page.click('#skin button[type=submit]');
    await waitForText(page, '#skin-msg', STRINGS.skinSaved);
    await waitForText(page, '#preview-note', STRINGS.previewSaved);
    assert.deepEqual([(await profile()).isAlex, (await profile()).skinUrl], [true, skinUrl], 'the same skin, with slim arms');
    // Removed: nothing drawn, nothing left to remove, and no skin (nor arms) for the game.
    await page.click('#skin-remove');
    await waitForText(page, '#skin-msg', STRINGS.skinRemoved);
    assert.equal((await canvasPixels(page, 'skin-preview', [])).drawn, 0, 'the removed skin is no longer drawn');
    assert.equal((await canvasPixels(page, 'skin-back', [])).drawn, 0, 'nor its back');
    assert.equal(await page.$eval('#skin-remove', (e) => (e as Field).disabled), true, 'there is no skin left to remove');
    assert.equal(await focused(page), 'skin-file', 'the focus moves from the button now off to the form\'s first control, not lost to the page');
    assert.deepEqual(await profile(), { username: NAME });
    await shot('skin-removed');
  });

  await t.test("the server's refusal shows beside the form that caused it", async () => {
    await page.type('#password-current', 'not-the-password');
    await page.type('#password-new', SECOND);
    await page.type('#password-repeat', SECOND);
    await page.click('#password button[type=submit]');
    // The server's own words (its 401), not a generic text of the page's, in the password form's
    // message, marked as an error; every other form's message is empty (the skin's "removed" too).
    await waitForText(page, '#password-msg', WRONG_CURRENT);
    assert.equal(await page.$eval('#password-msg', (e) => e.className), 'msg error');
    const messages = await page.$$eval('.msg', (boxes) => boxes.map((b) => [b.id, (b.textContent ?? '').trim()]));
    assert.deepEqual(messages.filter(([, text]) => text !== ''), [['password-msg', WRONG_CURRENT]]);
    await waitForView(page, 'signed-in');
    await shot('password-refused');
  });

  await t.test('changing the password keeps this session and ends the others', async () => {
    const other = await fetchReply(`${url}/account/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: NAME, password: FIRST }) });
    const otherToken: string = other.body.result.accessToken;
    await page.$eval('#password-current', (e) => ((e as Field).value = ''));
    await page.type('#password-current', FIRST);
    await page.click('#password button[type=submit]');
    await waitForText(page, '#password-msg', STRINGS.passwordChanged);
    assert.equal(await page.$eval('#password-new', (e) => (e as Field).value), '', 'the fields are emptied');
    const ended = await fetchReply(`${url}/account/me`, { headers: { authorization: `Bearer ${otherToken}` } });
    assert.equal(ended.status, 401);
    await shot('password-changed');
  });

  await t.test('signing out everywhere goes back to the sign-in form', async () => {
    await page.click('#sessions button[type=submit]');
    await waitForView(page, 'signed-out');
    await waitForText(page, '#signin-msg', STRINGS.loggedOutAll);
    // The sign-up form is emptied (its invite is spent) and the sign-in form comes first again.
    assert.equal(await page.$eval('#signup-invite', (e) => (e as Field).value), '');
    assert.equal(await page.$eval('#view-signed-out .card', (e) => e.id), 'signin-card');
    await shot('signed-out-everywhere');
  });

  await t.test('a reset link sets a new password, and it signs in', async () => {
    const reset = await runCli(['user', 'reset-link', NAME, '--db', db], { env: cliEnv });
    assert.equal(reset.code, 0, reset.stderr);
    const resetLink = linkIn(reset.stdout, 'reset');
    assert.ok(resetLink.startsWith(`${url}/account#reset=`), resetLink);
    await page.goto(resetLink);
    await waitForView(page, 'reset');
    assert.equal(await page.evaluate(() => location.hash), '');
    await page.type('#reset-password', THIRD);
    await page.type('#reset-repeat', THIRD);
    await shot('reset-link');
    await page.click('#reset button[type=submit]');
    await waitForView(page, 'signed-out');
    await waitForText(page, '#signin-msg', STRINGS.resetDone.replace('{name}', NAME));
    assert.equal(await page.$eval('#signin-name', (e) => (e as Field).value), NAME);
    assert.equal(await focused(page), 'signin-password');
    await shot('reset-done');
    await page.keyboard.type(THIRD);
    await page.keyboard.press('Enter');
    await waitForView(page, 'signed-in');
    await shot('signed-in-after-reset');
  });

  await t.test('the password set on the page logs a launcher in: /auth, /join, /hasJoined', async () => {
    // The "done when": a player made from an invite link on the page, whose password was
    // last set there from a reset link, is logged in by the launcher and seen joining by the game
    // server, through the calls a LauncherServer makes, as it makes them.
    const uuid = await textOf(page, '#me-uuid');
    const keyless = await post('/auth', { login: NAME, password: THIRD });
    assert.deepEqual([keyless.status, keyless.body.error], [401, 'Missing or wrong API key'], 'the API key is in force (the page needed none)');
    const auth = await launcher('auth', { login: NAME, password: THIRD });
    assert.equal(auth.status, 200, auth.text);
    assert.equal(auth.body.result.username, NAME);
    assert.equal(auth.body.result.userUUID, uuid);
    const serverID = '-4c1e2f6a9b3d7e08';
    const join = await launcher('join', { accessToken: auth.body.result.accessToken, userUUID: auth.body.result.userUUID, serverID });
    assert.deepEqual(join.body, { success: true, result: true }, join.text);
    const joined = await launcher('hasJoined', { username: NAME, serverID });
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.result.userUUID, uuid);
    // The passwords before the reset no longer log in.
    for (const old of [FIRST, SECOND]) assert.equal((await launcher('auth', { login: NAME, password: old })).status, 401);
  });

  await t.test('the keyboard alone: Tab to the name, type, Enter signs in', async () => {
    await page.goto(`${url}/account`);
    await waitForView(page, 'signed-out');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'signin-name');
    await page.keyboard.type(NAME);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'signin-password');
    await page.keyboard.type(THIRD);
    await shot('keyboard-sign-in', false);
    await page.keyboard.press('Enter');
    await waitForView(page, 'signed-in');
    assert.equal(await focused(page), 'me-heading');
    // The next Tab reaches the skin's file field: every control is in the tab order.
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'skin-file');
    await shot('keyboard-signed-in-desktop');
    await page.setViewport({ width: 360, height: 740 });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 360, `the signed-in page scrolls sideways on a phone: ${wide} px wide`);
    await shot('signed-in-phone');
  });

  await t.test('the keyboard alone: from an invite link, Tab, typing and Enter sign a new player up and change the password', async () => {
    await page.setViewport({ width: 1280, height: 800 });
    const invite2 = await runCli(['invite', 'create', '--db', db], { env: cliEnv });
    assert.equal(invite2.code, 0, invite2.stderr);
    const link = linkIn(invite2.stdout, 'invite');
    // Opened in the signed-in page, the link waits: the page says so, and a reload (which signs
    // this page out) takes it.
    await waitForView(page, 'signed-in');
    await page.goto(link);
    await waitForText(page, '#sessions-msg', STRINGS.linkWhileSignedIn);
    assert.equal(await page.evaluate(() => location.hash), `#invite=${link.split('#invite=')[1]}`, 'the link is still in the address');
    await shot('invite-link-while-signed-in');
    await page.reload();
    await waitForView(page, 'signed-out');
    // The link puts the focus on the name; Tab goes on through the password, its repeat and the
    // invite code (filled in from the link), and Enter sends the form.
    assert.equal(await focused(page), 'signup-name');
    await page.keyboard.type(KEYS_NAME);
    for (const [id, text] of [['signup-password', KEYS_FIRST], ['signup-repeat', KEYS_FIRST]] as const) {
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), id);
      await page.keyboard.type(text);
    }
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'signup-invite');
    assert.equal(await page.$eval('#signup-invite', (e) => (e as Field).value), link.split('#invite=')[1]);
    await shot('keyboard-sign-up', false);
    await page.keyboard.press('Enter');
    await waitForView(page, 'signed-in');
    assert.equal(await textOf(page, '#me-heading'), STRINGS.signedInAs.replace('{name}', KEYS_NAME));
    assert.equal(await focused(page), 'me-heading');

    // Tab reaches every control that can act, in reading order (the buttons that remove a skin or
    // cape the player has not got are off, and skipped), up to the password form.
    const order: (string | undefined)[] = [];
    while (order.length < 10 && (await focused(page)) !== 'password-current') {
      await page.keyboard.press('Tab');
      order.push(await focused(page));
    }
    assert.deepEqual(order, ['skin-file', 'skin-classic', STRINGS.saveSkin, 'cape-file', STRINGS.saveCape, 'password-current']);
    await page.keyboard.type(KEYS_FIRST);
    for (const id of ['password-new', 'password-repeat']) {
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), id);
      await page.keyboard.type(KEYS_SECOND);
    }
    await shot('keyboard-change-password', false);
    // Enter on the form's button: the button is off while the server answers, and has the focus again after.
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), STRINGS.changePassword);
    await page.keyboard.press('Enter');
    await waitForText(page, '#password-msg', STRINGS.passwordChanged);
    assert.equal(await focused(page), STRINGS.changePassword, 'the focus is back on the button, not lost to the page');
    // The new password is the one the launcher takes now.
    assert.equal((await launcher('auth', { login: KEYS_NAME, password: KEYS_SECOND })).status, 200);
    assert.equal((await launcher('auth', { login: KEYS_NAME, password: KEYS_FIRST })).status, 401);
    await shot('keyboard-password-changed', false);
  });

  await t.test('the token lives in the page only: no session cookie, no storage, and a reload signs out', async () => {
    await waitForView(page, 'signed-in');
    // After every action above: one cookie in the whole browser (for any site), the device
    // cookie the sign-ins set (src/account/device-cookie.ts), which no script can read and only a
    // sign-in sends; nothing in the page's storage of any kind.
    const cookies = await page.browserContext().cookies();
    assert.deepEqual(
      cookies.map((c) => [c.name, c.path, c.httpOnly, c.secure, c.sameSite]),
      [['mcauth_device', '/account/login', true, true, 'Strict']],
    );
    const stored = await page.evaluate(async () => ({
      local: localStorage.length,
      session: sessionStorage.length,
      indexedDB: (await indexedDB.databases()).map((d) => d.name),
      caches: await caches.keys(),
    }));
    assert.deepEqual(stored, { local: 0, session: 0, indexedDB: [], caches: [] });
    // A reload starts signed out and stays so: the new page sends no token, since it has none.
    const sent: string[] = [];
    const withToken = (r: HTTPRequest): void => {
      if (r.headers().authorization !== undefined) sent.push(r.url());
    };
    page.on('request', withToken);
    await page.reload({ waitUntil: 'networkidle0' });
    page.off('request', withToken);
    await waitForView(page, 'signed-out');
    assert.equal(await page.$eval('#view-signed-in', (e) => e.hasAttribute('hidden')), true);
    assert.deepEqual(sent, [], 'the reloaded page sent a token');
    await shot('reloaded-signed-out', false);
  });

  /** Opens the page afresh and signs in with its form. */
  const signInHere = async (name: string, password: string): Promise<void> => {
    await page.goto(`${url}/account`);
    await waitForView(page, 'signed-out');
    await page.type('#signin-name', name);
    await page.type('#signin-password', password);
    await page.click('#signin button[type=submit]');
    await waitForView(page, 'signed-in');
  };

  await t.test('"Sign out" ends this page\'s session only: the page forgets the token and the player, the launcher stays signed in', async () => {
    const launcherToken: string = (await launcher('auth', { login: NAME, password: THIRD })).body.result.accessToken;
    // A skin and a cape, set through the API with the launcher's token, so that the page has a player's all to forget.
    for (const [path, png] of [['skin?model=classic', LOOK_SKIN], ['cape', LOOK_CAPE]] as const) {
      const saved = await fetchReply(`${url}/account/${path}`, { method: 'PUT', headers: { authorization: `Bearer ${launcherToken}`, 'content-type': 'image/png' }, body: png });
      assert.equal(saved.status, 200, saved.text);
    }
    await signInHere(NAME, THIRD);
    for (const id of ['skin-preview', 'skin-back', 'cape-preview']) assert.ok((await canvasPixels(page, id, [])).drawn > 0, `${id} is drawn`);
    await page.click('#signout');
    await waitForView(page, 'signed-out');
    await waitForText(page, '#signin-msg', STRINGS.signedOut);
    assert.equal(await focused(page), 'signin-name');
    // Nothing of the player is left in the page, hidden or not.
    for (const id of ['#me-heading', '#me-uuid', '#me-created', '#me-last']) assert.equal(await textOf(page, id), '', id);
    assert.equal(await page.$eval('#password-user', (e) => (e as Field).value), '');
    for (const id of ['skin-preview', 'skin-back', 'cape-preview']) assert.equal((await canvasPixels(page, id, [])).drawn, 0, `${id} is cleared`);
    // The page holds no token: its next call (a sign-in with a wrong password) carries none.
    const sent: (string | undefined)[] = [];
    const watch = (r: HTTPRequest): void => {
      if (r.url().includes('/account/')) sent.push(r.headers().authorization);
    };
    page.on('request', watch);
    await page.type('#signin-password', 'not-the-password');
    await page.click('#signin button[type=submit]');
    await waitForText(page, '#signin-msg', WRONG_LOGIN);
    page.off('request', watch);
    assert.equal(sent.length, 1, 'one call');
    assert.equal(sent[0], undefined, 'sent without a token');
    await shot('signed-out-here');
    // The API has no call that ends one token: a launcher's session (and so the page's, until it expires) lives on.
    const me = await fetchReply(`${url}/account/me`, { headers: { authorization: `Bearer ${launcherToken}` } });
    assert.equal(me.status, 200, me.text);
  });

  await t.test('signed in with a skin and a cape, at phone and desktop widths, light and dark: no sideways scroll, readable text', async () => {
    // The skin and cape set above.
    await page.setViewport({ width: 1280, height: 800 });
    await signInHere(NAME, THIRD);
    await waitForText(page, '#preview-note', STRINGS.previewSaved);
    for (const id of ['skin-preview', 'skin-back', 'cape-preview']) assert.ok((await canvasPixels(page, id, [])).drawn > 0, `${id} is drawn`);
    // Text on what it sits on, buttons on their own colour: at least WCAG AA's 4.5:1 in either scheme.
    const readable = ['body', 'h1', '#me-heading', 'dt', 'dd', 'figcaption', '#preview-note', '#sessions .hint', 'label', '#skin button[type=submit]', '#skin-remove', '#signout', '#sessions button[type=submit]'];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      const seen = await colours(page, readable);
      // The scheme is the one asked for: a dark page on a dark background, and the reverse.
      assert.equal(contrast(seen[0]![2], 'rgb(0, 0, 0)') < contrast(seen[0]![2], 'rgb(255, 255, 255)'), scheme === 'dark', `${scheme}: the page's background is ${seen[0]![2]}`);
      for (const [selector, color, background] of seen) {
        assert.ok(contrast(color, background) >= 4.5, `${scheme}: ${selector} is ${color} on ${background}, ${contrast(color, background).toFixed(2)}:1`);
      }
      for (const [width, height, device] of [[390, 844, 'phone'], [1280, 800, 'desktop']] as const) {
        await page.setViewport({ width, height });
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= width, `${scheme}, ${device}: the page scrolls sideways, ${wide} px wide`);
        await shot(`account-page-${device}-${scheme}`);
      }
    }
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.setViewport({ width: 1280, height: 800 });
  });

  assert.deepEqual(problems, [], 'the page logged no error (a CSP refusal would be one)');
});
