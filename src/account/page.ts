// The account page (GET {base}/account): one HTML document with its style and script inline, so
// nothing is read from disk or fetched from elsewhere. The script and style are the same for
// every setting (settings reach the script as data attributes), so the Content-Security-Policy
// allows exactly those two texts by their SHA-256 and nothing else runs or styles the page.
import { createHash } from 'node:crypto';
import { STRINGS, type Strings } from './strings.ts';

export interface AccountSettings {
  registration: 'off' | 'invite' | 'open';
  minPasswordLength: number;
  basePath: string;
  /** The server's name (--server-name) for the title and heading; '' none. */
  serverName: string;
}

/** Longest --server-name, in code points: a name, not a sentence; it stays on a line or two of a phone's heading and fits a tab. */
export const MAX_SERVER_NAME_CHARS = 64;

export const STYLE = `
:root { color-scheme: light dark; --bg: #f5f6f8; --card: #fff; --text: #1c2128; --muted: #59636e; --line: #c9d1d9;
  --accent: #0b5cd5; --on-accent: #fff; --danger: #c4212c; --ok: #1a7f37; --focus: #0b5cd5; --check: #e4e7eb; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f1318; --card: #171c23; --text: #e6edf3; --muted: #9aa4ae; --line: #38414b;
    --accent: #4d94ff; --on-accent: #0f1318; --danger: #ff6b6b; --ok: #4cc26b; --focus: #7cb1ff; --check: #262d36; }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 46rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: .25rem 0 1rem; }
h2 { font-size: 1.15rem; line-height: 1.3; margin: 0 0 .5rem; }
h2:focus { outline: none; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); align-items: start; margin-bottom: 1rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem 1.25rem; margin: 0 0 1rem; }
.grid > .card { margin: 0; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input[type=text], input[type=password] { display: block; width: 100%; font: inherit; padding: .5rem .625rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: inherit; }
input[aria-invalid=true] { border-color: var(--danger); }
input[type=file] { display: block; font: inherit; font-size: .9375rem; max-width: 100%; }
a { color: var(--accent); font-weight: 600; }
.hint { color: var(--muted); font-size: .875rem; margin: .25rem 0 0; }
button { font: inherit; font-weight: 600; padding: .5rem 1rem; min-height: 2.5rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--on-accent); cursor: pointer; }
button.quiet { background: transparent; color: var(--accent); }
button.danger { background: transparent; border-color: var(--danger); color: var(--danger); }
button:disabled { opacity: .5; cursor: default; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1rem; }
.msg { margin: .75rem 0 0; }
.msg:empty { margin: 0; }
.msg.error { color: var(--danger); font-weight: 600; }
.msg.ok { color: var(--ok); font-weight: 600; }
fieldset { border: 0; padding: 0; margin: .75rem 0 0; min-width: 0; }
legend { font-weight: 600; padding: 0; margin-bottom: .25rem; }
.choice label { display: flex; align-items: center; gap: .5rem; font-weight: 400; margin: .25rem 0 0; }
.choice input { width: 1.125rem; height: 1.125rem; margin: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .5rem 0 0; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 30rem) {
  main { padding: 1rem .75rem 2rem; }
  .card { padding: .875rem 1rem 1rem; }
  dl { grid-template-columns: 1fr; gap: 0; }
  dd { margin-bottom: .5rem; }
}
/* The three previews take a row of their own above the forms: beside them, the forms would be squeezed. */
.preview { display: flex; flex-wrap: wrap; align-items: flex-end; gap: .75rem 1.5rem; margin: .75rem 0 .5rem; }
.views { display: flex; gap: .75rem; }
.uploads form + form { border-top: 1px solid var(--line); margin-top: 1.25rem; padding-top: .5rem; }
canvas { display: block; image-rendering: pixelated; image-rendering: crisp-edges; border: 1px solid var(--line); border-radius: 4px;
  background: repeating-conic-gradient(var(--check) 0 25%, transparent 0 50%) 0 0 / 16px 16px; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: .875rem; text-align: center; margin-top: .25rem; }
#skin-preview, #skin-back { width: 128px; height: 256px; }
#cape-preview { width: 80px; height: 128px; }
/* On a phone, 6 CSS pixels a skin pixel: front, back and cape still share one row. */
@media (max-width: 30rem) { #skin-preview, #skin-back { width: 96px; height: 192px; } #cape-preview { width: 60px; height: 96px; } }
`;

// The page's behaviour. Plain ES2020 for any current browser; no string a person reads is
// written here: they come from strings.ts through data-strings (as S.key).
const SCRIPT = String.raw`
(() => {
  'use strict';
  const app = document.getElementById('app');
  const S = JSON.parse(app.dataset.strings);
  const base = app.dataset.base;
  const minPassword = Number(app.dataset.minPassword);
  const $ = (id) => document.getElementById(id);
  const fmt = (text, vars) => text.replace(/\{(\w+)\}/g, (mark, key) => (key in vars ? String(vars[key]) : mark));

  // The access token lives in this closure only: never in storage or a cookie, gone with the tab.
  let token = '';
  let me = null;
  let resetCode = '';
  const saved = { skin: null, cape: null };
  const chosen = { skin: null, cape: null };

  function failure(message, status, field) {
    const err = new Error(message);
    err.status = status;
    err.field = field;
    return err;
  }

  async function call(method, path, body, type) {
    const headers = {};
    if (token) headers.authorization = 'Bearer ' + token;
    if (type) headers['content-type'] = type;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(body);
    }
    let res;
    try {
      // Cookies only for signing in: the device cookie (src/account/device-cookie.ts). The session is the token, never a cookie.
      const credentials = path === 'login' ? 'same-origin' : 'omit';
      res = await fetch(base + '/account/' + path, { method, headers, body, cache: 'no-store', credentials });
    } catch {
      throw failure(S.networkError, 0);
    }
    let answer;
    try {
      answer = await res.json();
    } catch {
      throw failure(fmt(S.badAnswer, { status: res.status }), res.status);
    }
    if (answer && answer.success === true) return answer.result;
    const message = answer && typeof answer.error === 'string' ? answer.error : fmt(S.badAnswer, { status: res.status });
    throw failure(message, res.status);
  }

  function say(form, text, kind) {
    const box = $(form + '-msg');
    box.textContent = text;
    box.className = 'msg' + (kind ? ' ' + kind : '');
  }

  function show(view, focus) {
    for (const v of ['signed-out', 'reset', 'signed-in']) $('view-' + v).hidden = v !== view;
    app.dataset.view = view;
    if (focus) $(focus).focus();
  }

  function clearFields(form) {
    for (const input of $(form).querySelectorAll('input[type=password], input[type=file]')) input.value = '';
  }

  // The sign-up form emptied (its code is spent, or not needed) and the sign-in form first again.
  function resetSignUp() {
    if (!$('signup')) return;
    $('signup').reset();
    say('signup', '', '');
    const signin = $('signin-card');
    signin.parentNode.insertBefore(signin, signin.parentNode.firstChild);
  }

  // Checks done here only to answer at once; the server checks everything again.
  function required(ids) {
    for (const id of ids) {
      const input = $(id);
      if (input.value === '') throw failure(S.fillIn, 0, id);
    }
  }
  function newPassword(id, repeatId) {
    const password = $(id).value;
    if ([...password].length < minPassword) throw failure(fmt(S.passwordTooShort, { min: minPassword }), 0, id);
    if ($(repeatId).value !== password) throw failure(S.passwordsDiffer, 0, repeatId);
    return password;
  }

  // Runs one action of a form: its buttons off meanwhile, its outcome in the form's own message.
  async function act(form, run) {
    const element = $(form);
    if (element.getAttribute('aria-busy') === 'true') return;
    element.setAttribute('aria-busy', 'true');
    for (const input of element.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
    const buttons = [...element.querySelectorAll('button')].filter((b) => !b.disabled);
    // A disabled button loses the keyboard's focus: it is given back when the action ends.
    const focused = buttons.find((b) => b === document.activeElement);
    for (const b of buttons) b.disabled = true;
    // A message answers the latest action only.
    for (const box of document.querySelectorAll('.msg')) if (box.id !== form + '-msg') say(box.id.slice(0, -4), '', '');
    say(form, S.working, '');
    try {
      const done = await run();
      say(form, done || '', done ? 'ok' : '');
    } catch (err) {
      if (err.status === 401 && token && !(await stillSignedIn())) {
        say(form, '', '');
        signOut(S.sessionEnded, 'error');
      } else {
        say(form, err.message, 'error');
        if (err.field) {
          $(err.field).setAttribute('aria-invalid', 'true');
          $(err.field).focus();
        }
      }
    } finally {
      element.removeAttribute('aria-busy');
      for (const b of buttons) b.disabled = false;
      updateButtons();
      // A remove button is off once there is nothing left to remove: then the form's first control.
      if (focused && focused.isConnected && document.activeElement === document.body) (focused.disabled ? element.querySelector('input, button:not(:disabled)') : focused).focus();
    }
  }

  function onSubmit(form, run) {
    $(form).addEventListener('submit', (event) => {
      event.preventDefault();
      act(form, run);
    });
  }

  async function stillSignedIn() {
    try {
      me = await call('GET', 'me');
      return true;
    } catch (err) {
      return err.status !== 401;
    }
  }

  async function enter(accessToken) {
    token = accessToken;
    me = await call('GET', 'me');
    clearFields('signin');
    resetSignUp();
    say('signin', '', '');
    await loadSaved();
    render();
    show('signed-in', 'me-heading');
  }

  function signOut(message, kind) {
    token = '';
    me = null;
    saved.skin = saved.cape = chosen.skin = chosen.cape = null;
    // Nothing of the player is left behind in the hidden view (a shared computer).
    for (const id of ['me-heading', 'me-uuid', 'me-created', 'me-last', 'looks-note']) $(id).textContent = '';
    $('admin-link').hidden = true;
    $('password-user').value = '';
    drawPreview();
    for (const form of ['skin', 'cape', 'password', 'sessions']) {
      clearFields(form);
      say(form, '', '');
    }
    resetSignUp();
    show('signed-out', 'signin-name');
    say('signin', message, kind);
    readLink();
  }

  // Textures this service hosts are fetched from its own /textures/ (the page may load nothing
  // from another origin); a skin hosted elsewhere is not shown. The bytes are kept with the image:
  // a saved skin is sent again when only its arms change.
  async function fetchTexture(url) {
    const hash = /\/textures\/([0-9a-f]{64})$/.exec(url || '');
    if (!hash) return null;
    try {
      const res = await fetch(base + '/textures/' + hash[1], { credentials: 'omit' });
      if (!res.ok) return null;
      const blob = await res.blob();
      return { blob, image: await createImageBitmap(blob) };
    } catch {
      return null;
    }
  }
  async function loadSaved() {
    [saved.skin, saved.cape] = await Promise.all([fetchTexture(me.skinUrl), fetchTexture(me.capeUrl)]);
  }

  // In the player's own locale and time zone, the zone named: a time without one is ambiguous
  // (dateStyle and timeStyle take no timeZoneName, so the parts are asked for one by one).
  const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
  function showTime(id, time) {
    if (time === null || time === undefined) {
      $(id).textContent = S.never;
      return;
    }
    const shown = document.createElement('time');
    shown.dateTime = time;
    shown.textContent = dateFormat.format(new Date(time));
    $(id).replaceChildren(shown);
  }

  function render() {
    $('me-heading').textContent = fmt(S.signedInAs, { name: me.name });
    $('me-uuid').textContent = me.uuid;
    $('password-user').value = me.name;
    showTime('me-created', me.createdAt);
    showTime('me-last', me.lastLoginAt);
    $('admin-link').hidden = me.admin !== true;
    if (!chosen.skin) $(me.isAlex ? 'skin-slim' : 'skin-classic').checked = true;
    const elsewhere = [me.skinUrl !== null && !saved.skin ? S.skinElsewhere : '', me.capeUrl !== null && !saved.cape ? S.capeElsewhere : ''];
    $('looks-note').textContent = elsewhere.filter(Boolean).join(' ');
    drawPreview();
    updateButtons();
  }

  function updateButtons() {
    if (!me) return;
    if ($('skin').getAttribute('aria-busy') !== 'true') $('skin-remove').disabled = me.skinUrl === null;
    if ($('cape').getAttribute('aria-busy') !== 'true') $('cape-remove').disabled = me.capeUrl === null;
  }

  // One side of a skin, 16x32 skin pixels, from the standard layout (64x64, or the old 64x32
  // whose left limbs mirror the right ones); an HD skin is scaled down by its multiple of 64.
  // Each part is a box of width w, height h and depth d whose faces lie unfolded from (x, y):
  // the front at (x+d, y+d), the back past the left side at (x+2d+w, y+d). Seen from behind,
  // a part stands where its front would in a mirror: the right arm on the viewer's right.
  function drawSkin(canvas, image, slim, back) {
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!image) return;
    ctx.imageSmoothingEnabled = false;
    const u = image.width / 64;
    const k = canvas.width / 16;
    const legacy = image.height * 2 === image.width;
    const arm = slim ? 3 : 4;
    const part = (sx, sy, w, h, dx, dy, mirror) => {
      ctx.save();
      ctx.translate(dx * k + (mirror ? w * k : 0), dy * k);
      if (mirror) ctx.scale(-1, 1);
      ctx.drawImage(image, sx * u, sy * u, w * u, h * u, 0, 0, w * k, h * k);
      ctx.restore();
    };
    // (dx, dy): where the box's front goes in the front view.
    const box = (x, y, w, h, d, dx, dy, mirror) =>
      back ? part(x + 2 * d + w, y + d, w, h, 16 - dx - w, dy, mirror) : part(x + d, y + d, w, h, dx, dy, mirror);
    box(0, 0, 8, 8, 8, 4, 0); // head
    box(16, 16, 8, 12, 4, 4, 8); // body
    box(40, 16, arm, 12, 4, 4 - arm, 8); // right arm, on the viewer's left from the front
    box(0, 16, 4, 12, 4, 4, 20); // right leg
    if (legacy) {
      box(40, 16, arm, 12, 4, 12, 8, true);
      box(0, 16, 4, 12, 4, 8, 20, true);
      if (hatHasHoles(image)) box(32, 0, 8, 8, 8, 4, 0);
      return;
    }
    box(32, 48, arm, 12, 4, 12, 8); // left arm
    box(16, 48, 4, 12, 4, 8, 20); // left leg
    box(32, 0, 8, 8, 8, 4, 0); // hat
    box(16, 32, 8, 12, 4, 4, 8); // jacket
    box(40, 32, arm, 12, 4, 4 - arm, 8); // right sleeve
    box(48, 48, arm, 12, 4, 12, 8); // left sleeve
    box(0, 32, 4, 12, 4, 4, 20); // right trouser leg
    box(0, 48, 4, 12, 4, 8, 20); // left trouser leg
  }

  // The game ignores an old skin's hat layer when it has no see-through pixel (many such skins
  // filled it with one solid colour), and so does the preview.
  function hatHasHoles(image) {
    const u = image.width / 64;
    const scratch = document.createElement('canvas');
    scratch.width = 32 * u;
    scratch.height = 16 * u;
    const ctx = scratch.getContext('2d');
    ctx.drawImage(image, 32 * u, 0, 32 * u, 16 * u, 0, 0, 32 * u, 16 * u);
    const data = ctx.getImageData(0, 0, scratch.width, scratch.height).data;
    for (let i = 3; i < data.length; i += 4) if (data[i] < 128) return true;
    return false;
  }

  // The front of a cape: 10x16 at (1, 1) of the 64x32 layout.
  function drawCape(canvas, image) {
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!image) return;
    ctx.imageSmoothingEnabled = false;
    const u = image.width / 64;
    ctx.drawImage(image, u, u, 10 * u, 16 * u, 0, 0, canvas.width, canvas.height);
  }

  function drawPreview() {
    const skin = chosen.skin || saved.skin?.image;
    drawSkin($('skin-preview'), skin, $('skin-slim').checked, false);
    drawSkin($('skin-back'), skin, $('skin-slim').checked, true);
    drawCape($('cape-preview'), chosen.cape || saved.cape?.image);
    const armsChanged = !chosen.skin && saved.skin && me && $('skin-slim').checked !== me.isAlex;
    $('preview-note').textContent = chosen.skin || chosen.cape ? S.previewPending : armsChanged ? S.armsPending : S.previewSaved;
  }

  async function choose(kind) {
    const file = $(kind + '-file').files[0];
    chosen[kind] = null;
    say(kind, '', '');
    if (file) {
      try {
        chosen[kind] = await createImageBitmap(file);
      } catch {
        say(kind, S.unreadableImage, 'error');
      }
    }
    drawPreview();
  }

  function upload(kind, path, doneText) {
    return async () => {
      // Without a new file, a saved skin goes again with the arms now chosen.
      const file = $(kind + '-file').files[0] || (kind === 'skin' ? saved.skin?.blob : undefined);
      if (!file) throw failure(S.chooseFile, 0, kind + '-file');
      me = await call('PUT', path(), file, 'image/png');
      chosen[kind] = null;
      $(kind + '-file').value = '';
      await loadSaved();
      render();
      return doneText;
    };
  }

  function remove(kind, doneText) {
    $(kind + '-remove').addEventListener('click', () =>
      act(kind, async () => {
        me = await call('DELETE', kind);
        saved[kind] = null;
        render();
        return doneText;
      }),
    );
  }

  onSubmit('signin', async () => {
    required(['signin-name', 'signin-password']);
    const result = await call('POST', 'login', { name: $('signin-name').value.trim(), password: $('signin-password').value });
    await enter(result.accessToken);
  });

  if ($('signup')) {
    onSubmit('signup', async () => {
      const invite = $('signup-invite').value.trim();
      const byInvite = app.dataset.registration === 'invite';
      required(['signup-name', 'signup-password', 'signup-repeat'].concat(byInvite ? ['signup-invite'] : []));
      const body = { name: $('signup-name').value.trim(), password: newPassword('signup-password', 'signup-repeat') };
      if (byInvite || invite !== '') body.invite = invite;
      const result = await call('POST', 'register', body);
      await enter(result.accessToken);
    });
  }

  onSubmit('reset', async () => {
    required(['reset-password', 'reset-repeat']);
    const result = await call('POST', 'reset', { code: resetCode, password: newPassword('reset-password', 'reset-repeat') });
    resetCode = '';
    clearFields('reset');
    $('signin-name').value = result.username;
    signOut(fmt(S.resetDone, { name: result.username }), 'ok');
    $('signin-password').focus();
  });
  $('reset-back').addEventListener('click', () => {
    resetCode = '';
    clearFields('reset');
    say('reset', '', '');
    show('signed-out', 'signin-name');
  });

  onSubmit('password', async () => {
    required(['password-current', 'password-new', 'password-repeat']);
    const fresh = newPassword('password-new', 'password-repeat');
    me = await call('POST', 'password', { current: $('password-current').value, new: fresh });
    clearFields('password');
    render();
    return S.passwordChanged;
  });

  $('skin-file').addEventListener('change', () => choose('skin'));
  $('cape-file').addEventListener('change', () => choose('cape'));
  $('skin-classic').addEventListener('change', drawPreview);
  $('skin-slim').addEventListener('change', drawPreview);
  onSubmit('skin', upload('skin', () => 'skin?model=' + ($('skin-slim').checked ? 'slim' : 'classic'), S.skinSaved));
  onSubmit('cape', upload('cape', () => 'cape', S.capeSaved));
  remove('skin', S.skinRemoved);
  remove('cape', S.capeRemoved);

  onSubmit('sessions', async () => {
    await call('POST', 'logout-all');
    signOut(S.loggedOutAll, 'ok');
  });
  // The API has no call that ends one token: this page forgets its own, which dies with it (the
  // closure holds the only copy), and the launcher's sessions carry on.
  $('signout').addEventListener('click', () => signOut(S.signedOut, 'ok'));

  // Invite and reset links carry their code in the fragment, which never reaches a server or its
  // log; it is taken out of the address bar (and the history) once read.
  function readLink() {
    const link = new URLSearchParams(location.hash.slice(1));
    if (!link.has('invite') && !link.has('reset')) return;
    // Signed in, the link waits in the address bar: a reload (which signs the page out) or a sign-out takes it.
    if (token) {
      say('sessions', S.linkWhileSignedIn, 'error');
      return;
    }
    history.replaceState(null, '', location.pathname + location.search);
    if (link.has('reset')) {
      resetCode = link.get('reset');
      show('reset', 'reset-password');
    } else if ($('signup')) {
      const signup = $('signup-card');
      signup.parentNode.insertBefore(signup, signup.parentNode.firstChild);
      if ($('signup-invite')) $('signup-invite').value = link.get('invite');
      show('signed-out', 'signup-name');
    }
  }
  window.addEventListener('hashchange', readLink);
  show('signed-out');
  readLink();
})();
`;

/** The Content-Security-Policy source for one inline text: its SHA-256 (CSP Level 2, "hash-source"). */
const hashSource = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The headers of a page whose one script and one style are `script` and `style` (the account
 * page's, the admin page's). Nothing but those runs or applies; it may call its own origin only,
 * show images only from data and blob URLs (the previews), post no form anywhere, and sit in no
 * frame (clickjacking).
 */
export function pageHeaders(script: string, style: string): Record<string, string> {
  const csp = [
    `default-src 'none'`,
    `script-src ${hashSource(script)}`,
    `style-src ${hashSource(style)}`,
    `img-src data: blob:`,
    `connect-src 'self'`,
    `form-action 'none'`,
    `frame-ancestors 'none'`,
    `base-uri 'none'`,
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

const HEADERS = pageHeaders(SCRIPT, STYLE);

/** Text made safe for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The keys of STRINGS the script reads (as S.key), sent to it as JSON. */
const SCRIPT_KEYS = [...new Set(Array.from(SCRIPT.matchAll(/\bS\.(\w+)/g), (m) => m[1]!))];

type Key = keyof typeof STRINGS;

/** A labelled input, with its hint when there is one. */
export function field(id: string, label: string, input: string, hint = ''): string {
  const described = hint === '' ? '' : ` aria-describedby="${id}-hint"`;
  const hintLine = hint === '' ? '' : `\n<p class="hint" id="${id}-hint">${hint}</p>`;
  return `<label for="${id}">${label}</label>\n<input id="${id}"${described} ${input}>${hintLine}`;
}

/** Where a form says how its action went. */
export const message = (form: string): string => `<p class="msg" id="${form}-msg" role="status" aria-live="polite"></p>`;

export function renderPage(settings: AccountSettings): { html: string; headers: Record<string, string> } {
  const t = (key: Key): string => escapeHtml(STRINGS[key]);
  const min = String(settings.minPasswordLength);
  const passwordHint = escapeHtml(STRINGS.newPasswordHint.replace('{min}', min));
  const name = (id: string): string =>
    field(id, t('name'), 'type="text" name="name" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="16"', id === 'signup-name' ? t('nameHint') : '');
  const fresh = (id: string, label: Key): string => field(id, t(label), `type="password" autocomplete="new-password" minlength="${escapeHtml(min)}"`, label === 'newPassword' || label === 'password' ? passwordHint : '');
  const strings: Partial<Strings> = Object.fromEntries(SCRIPT_KEYS.map((k) => [k, STRINGS[k as Key]]));
  const title = settings.serverName === '' ? t('title') : escapeHtml(STRINGS.titleOn.replace('{server}', () => settings.serverName));

  // Open sign-up takes a code too: past the hourly limit of all addresses, only one with a code passes.
  const invited = settings.registration === 'invite';
  const inviteField = field('signup-invite', t(invited ? 'invite' : 'inviteOptional'), 'type="text" name="invite" autocomplete="off" autocapitalize="none" spellcheck="false"', t(invited ? 'inviteHint' : 'inviteOptionalHint'));
  const signUp =
    settings.registration === 'off'
      ? ''
      : `
<section class="card" id="signup-card" aria-labelledby="signup-heading">
<h2 id="signup-heading">${t('signUpHeading')}</h2>
<form id="signup" method="post" novalidate>
${name('signup-name')}
${fresh('signup-password', 'password')}
${fresh('signup-repeat', 'repeatPassword')}
${inviteField}
<div class="actions"><button type="submit">${t('signUp')}</button></div>
${message('signup')}
</form>
</section>`;

  const html = `<!doctype html>
<html lang="${t('lang')}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<main id="app" data-view="signed-out" data-registration="${escapeHtml(settings.registration)}" data-min-password="${escapeHtml(min)}" data-base="${escapeHtml(settings.basePath)}" data-strings="${escapeHtml(JSON.stringify(strings))}">
<h1>${title}</h1>
<noscript><p>${t('noScript')}</p></noscript>

<div id="view-signed-out" hidden>
<div class="grid">
<section class="card" id="signin-card" aria-labelledby="signin-heading">
<h2 id="signin-heading">${t('signInHeading')}</h2>
<form id="signin" method="post" novalidate>
${name('signin-name')}
${field('signin-password', t('password'), 'type="password" name="password" autocomplete="current-password"')}
<div class="actions"><button type="submit">${t('signIn')}</button></div>
${message('signin')}
</form>
</section>${signUp}
</div>
</div>

<div id="view-reset" hidden>
<section class="card" aria-labelledby="reset-heading">
<h2 id="reset-heading">${t('resetHeading')}</h2>
<form id="reset" method="post" novalidate>
${fresh('reset-password', 'newPassword')}
${fresh('reset-repeat', 'repeatNewPassword')}
<div class="actions"><button type="submit">${t('setPassword')}</button><button type="button" class="quiet" id="reset-back">${t('backToSignIn')}</button></div>
${message('reset')}
</form>
</section>
</div>

<div id="view-signed-in" hidden>
<section class="card" aria-labelledby="me-heading">
<h2 id="me-heading" tabindex="-1"></h2>
<dl>
<dt>${t('uuid')}</dt><dd id="me-uuid"></dd>
<dt>${t('createdAt')}</dt><dd id="me-created"></dd>
<dt>${t('lastLoginAt')}</dt><dd id="me-last"></dd>
</dl>
<p id="admin-link" hidden><a href="${escapeHtml(settings.basePath)}/admin/">${t('adminPage')}</a></p>
</section>

<section class="card" aria-labelledby="looks-heading">
<h2 id="looks-heading">${t('looksHeading')}</h2>
<div class="preview">
<div class="views">
<figure><canvas id="skin-preview" width="128" height="256" role="img" aria-label="${t('skinPreview')}"></canvas><figcaption>${t('front')}</figcaption></figure>
<figure><canvas id="skin-back" width="128" height="256" role="img" aria-label="${t('skinBack')}"></canvas><figcaption>${t('back')}</figcaption></figure>
</div>
<figure><canvas id="cape-preview" width="80" height="128" role="img" aria-label="${t('capePreview')}"></canvas><figcaption>${t('cape')}</figcaption></figure>
</div>
<p class="hint" id="preview-note" aria-live="polite"></p>
<p class="hint" id="looks-note"></p>
<div class="uploads">
<form id="skin" method="post" novalidate>
${field('skin-file', t('skinFile'), 'type="file" name="skin" accept="image/png"')}
<fieldset class="choice">
<legend>${t('model')}</legend>
<label for="skin-classic"><input type="radio" id="skin-classic" name="model" value="classic" checked>${t('classic')}</label>
<label for="skin-slim"><input type="radio" id="skin-slim" name="model" value="slim">${t('slim')}</label>
</fieldset>
<div class="actions"><button type="submit">${t('saveSkin')}</button><button type="button" class="danger" id="skin-remove">${t('removeSkin')}</button></div>
${message('skin')}
</form>
<form id="cape" method="post" novalidate>
${field('cape-file', t('capeFile'), 'type="file" name="cape" accept="image/png"')}
<div class="actions"><button type="submit">${t('saveCape')}</button><button type="button" class="danger" id="cape-remove">${t('removeCape')}</button></div>
${message('cape')}
</form>
</div>
</section>

<section class="card" aria-labelledby="password-heading">
<h2 id="password-heading">${t('passwordHeading')}</h2>
<form id="password" method="post" novalidate>
<div hidden>${field('password-user', t('name'), 'type="text" name="username" autocomplete="username" readonly')}</div>
${field('password-current', t('currentPassword'), 'type="password" autocomplete="current-password"')}
${fresh('password-new', 'newPassword')}
${fresh('password-repeat', 'repeatNewPassword')}
<div class="actions"><button type="submit">${t('changePassword')}</button></div>
${message('password')}
</form>
</section>

<section class="card" aria-labelledby="sessions-heading">
<h2 id="sessions-heading">${t('sessionsHeading')}</h2>
<form id="sessions" method="post" novalidate>
<p class="hint">${t('sessionsHint')}</p>
<div class="actions"><button type="button" class="quiet" id="signout">${t('signOut')}</button><button type="submit" class="danger">${t('logoutAll')}</button></div>
${message('sessions')}
</form>
</section>
</div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
  return { html, headers: { ...HEADERS } };
}
