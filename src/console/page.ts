// The admin page (GET {base}/admin/): one HTML document with its style and script inline, the
// account page's look and its Content-Security-Policy (the two texts allowed by their SHA-256,
// nothing else). The script keeps the admin's access token in its closure only: never in
// storage, a cookie or the address. It holds no data: everything comes from the API
// ({base}/account/admin/..., src/console/api.ts), which checks the admin on every call.
import { escapeHtml, field, message, pageHeaders, STYLE as ACCOUNT_STYLE } from '../account/page.ts';
import { MAX_LOCK_REASON_CHARS } from '../limits.ts';
import { MAX_SEARCH_CHARS } from './data.ts';
import { STRINGS } from './strings.ts';

export interface AdminPageSettings {
  basePath: string;
  /** --server-name, for the title; '' none. */
  serverName: string;
}

const STYLE = `${ACCOUNT_STYLE}
main { max-width: 60rem; }
input[type=number], input[type=search] { display: block; width: 100%; font: inherit; padding: .5rem .625rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: inherit; }
input[readonly] { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875rem; }
.bar { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; margin-bottom: 1rem; }
.bar p { margin: 0; font-weight: 600; }
.results, .invites, .audit { list-style: none; padding: 0; margin: .75rem 0 0; }
.results li + li, .invites li + li, .audit li + li { border-top: 1px solid var(--line); }
.results button { width: 100%; text-align: left; background: transparent; color: var(--text); border: 0; border-radius: 4px; font-weight: 400; display: flex; flex-wrap: wrap; gap: 0 .75rem; }
.results .id, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .8125rem; color: var(--muted); overflow-wrap: anywhere; }
.results .tag { color: var(--danger); font-weight: 600; }
.invites li { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem; padding: .375rem 0; }
.audit li { padding: .375rem 0; font-size: .9375rem; }
.copy { display: flex; gap: .5rem; align-items: center; }
.copy input { flex: 1; min-width: 0; }
.textures { display: flex; flex-wrap: wrap; gap: 1rem 2rem; margin: .5rem 0; }
.textures img { display: block; width: 128px; height: auto; image-rendering: pixelated; border: 1px solid var(--line); border-radius: 4px;
  background: repeating-conic-gradient(var(--check) 0 25%, transparent 0 50%) 0 0 / 16px 16px; }
.part + .part { border-top: 1px solid var(--line); margin-top: 1.25rem; padding-top: .25rem; }
h3 { font-size: 1rem; margin: .75rem 0 .25rem; }
`;

// The page's behaviour. Plain ES2020; no string a person reads is written here: they come from
// strings.ts through data-strings (as S.key).
const SCRIPT = String.raw`
(() => {
  'use strict';
  const app = document.getElementById('app');
  const S = JSON.parse(app.dataset.strings);
  const base = app.dataset.base;
  const $ = (id) => document.getElementById(id);
  const fmt = (text, vars) => text.replace(/\{(\w+)\}/g, (mark, key) => (key in vars ? String(vars[key]) : mark));

  // The access token lives in this closure only: never in storage or a cookie, gone with the tab.
  let token = '';
  let player = null;
  let search = { by: 'name', q: '', next: null };
  const urls = [];

  function failure(message, status, field) {
    const err = new Error(message);
    err.status = status;
    err.field = field;
    return err;
  }

  async function call(method, path, body) {
    const headers = {};
    if (token) headers.authorization = 'Bearer ' + token;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(body);
    }
    let res;
    try {
      // Cookies only for signing in (the account page's device cookie); the session is the token.
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
    throw failure(answer && typeof answer.error === 'string' ? answer.error : fmt(S.badAnswer, { status: res.status }), res.status);
  }

  function say(form, text, kind) {
    const box = $(form + '-msg');
    box.textContent = text;
    box.className = 'msg' + (kind ? ' ' + kind : '');
  }

  function show(view, focus) {
    for (const v of ['signed-out', 'signed-in']) $('view-' + v).hidden = v !== view;
    app.dataset.view = view;
    if (focus) $(focus).focus();
  }

  // Runs one action of a form: its buttons off meanwhile, its outcome in the form's own message.
  async function act(form, run) {
    const element = $(form);
    if (element.getAttribute('aria-busy') === 'true') return;
    element.setAttribute('aria-busy', 'true');
    for (const input of element.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
    const buttons = [...element.querySelectorAll('button')].filter((b) => !b.disabled);
    const focused = buttons.find((b) => b === document.activeElement);
    for (const b of buttons) b.disabled = true;
    for (const box of document.querySelectorAll('.msg')) if (box.id !== form + '-msg') say(box.id.slice(0, -4), '', '');
    say(form, S.working, '');
    try {
      const done = await run();
      say(form, done || '', done ? 'ok' : '');
    } catch (err) {
      if (err.status === 401 && token) {
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
      for (const b of buttons) if (b.isConnected) b.disabled = false;
      updateButtons();
      // A button off once there is nothing left to do (both textures cleared): the form's first
      // control, else its section's heading, keeps the keyboard's place.
      if (focused && focused.isConnected && document.activeElement === document.body) {
        const next = focused.disabled ? element.querySelector('input, button:not(:disabled)') || element.closest('section').querySelector('h2[tabindex]') : focused;
        if (next) next.focus();
      }
    }
  }

  function onSubmit(form, run) {
    $(form).addEventListener('submit', (event) => {
      event.preventDefault();
      act(form, run);
    });
  }

  function required(id) {
    const value = $(id).value.trim();
    if (value === '') throw failure(S.fillIn, 0, id);
    return value;
  }

  const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
  const when = (time) => (time === null || time === undefined ? S.never : dateFormat.format(new Date(time)));
  const number = new Intl.NumberFormat();
  function bytes(n) {
    if (n === null) return S.notCounted;
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) (n /= 1024), i++;
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  }
  function duration(s) {
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    return (d ? d + ' d ' : '') + (d || h ? h + ' h ' : '') + m + ' min';
  }

  function clearPlayer() {
    player = null;
    for (const u of urls.splice(0)) URL.revokeObjectURL(u);
    $('player-card').hidden = true;
    for (const id of ['player-heading', 'p-uuid', 'p-created', 'p-last', 'p-status', 'skin-shown', 'cape-shown', 'audit']) $(id).replaceChildren();
    for (const id of ['lock-reason', 'rename-name', 'reset-link', 'remove-name']) $(id).value = '';
    $('reset-out').hidden = true;
    for (const f of ['looks', 'lock', 'rename', 'reset', 'remove']) say(f, '', '');
  }

  async function enter(accessToken, name) {
    token = accessToken;
    try {
      await call('GET', 'admin/me');
    } catch (err) {
      token = '';
      if (err.status === 403) throw failure(fmt(S.notAdmin, { name }), 403);
      throw err;
    }
    $('signin-password').value = '';
    $('who').textContent = fmt(S.signedInAs, { name });
    show('signed-in', 'who');
    await Promise.all([dashboard(), listInvites(), find(false)]);
  }

  function signOut(message, kind) {
    token = '';
    clearPlayer();
    for (const id of ['dash', 'results', 'invite-list']) $(id).replaceChildren();
    $('invite-out').hidden = true;
    $('invite-link').value = '';
    $('who').textContent = '';
    show('signed-out', 'signin-name');
    say('signin', message, kind);
  }

  function row(list, term, value) {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = value;
    list.append(dt, dd);
  }

  async function dashboard() {
    const d = await call('GET', 'admin/dashboard');
    const list = $('dash');
    list.replaceChildren();
    row(list, S.players, number.format(d.players));
    row(list, S.locked, number.format(d.locked));
    row(list, S.loginsHour, fmt(S.loginCounts, { ok: number.format(d.lastHour.ok), failed: number.format(d.lastHour.failed) }));
    row(list, S.loginsDay, fmt(S.loginCounts, { ok: number.format(d.lastDay.ok), failed: number.format(d.lastDay.failed) }));
    row(list, S.throttled, d.throttled === null ? S.notCounted : number.format(d.throttled));
    row(list, S.database, d.database);
    row(list, S.databaseSize, bytes(d.databaseBytes));
    row(list, S.version, d.version);
    row(list, S.uptime, duration(d.uptimeSeconds));
  }

  async function find(more) {
    if (!more) search = { by: $('by-uuid').checked ? 'uuid' : 'name', q: $('search-q').value.trim(), next: null };
    const query = new URLSearchParams({ by: search.by, q: search.q });
    if (more && search.next) query.set('after', search.next);
    const answer = await call('GET', 'admin/players?' + query);
    const list = $('results');
    if (!more) list.replaceChildren();
    for (const p of answer.players) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.uuid = p.id;
      const name = document.createElement('span');
      name.textContent = p.name;
      const id = document.createElement('span');
      id.className = 'id';
      id.textContent = p.id;
      b.append(name, id);
      if (p.locked) {
        const tag = document.createElement('span');
        tag.className = 'tag';
        tag.textContent = S.lockedMark;
        b.append(tag);
      }
      b.addEventListener('click', () => act('search', () => open(p.id)));
      li.append(b);
      list.append(li);
    }
    search.next = answer.next;
    $('more').hidden = answer.next === null;
    const shown = list.children.length;
    return shown === 0 ? S.noneFound : fmt(S.foundCount, { count: shown });
  }

  async function texture(hash) {
    const res = await fetch(base + '/textures/' + hash, { credentials: 'omit' });
    if (!res.ok) return null;
    const url = URL.createObjectURL(await res.blob());
    urls.push(url);
    return url;
  }

  async function shown(id, hash, url, label) {
    const box = $(id);
    box.replaceChildren();
    if (hash) {
      const src = await texture(hash);
      if (src) {
        const img = document.createElement('img');
        img.src = src;
        img.alt = label;
        box.append(img);
        return;
      }
    }
    box.textContent = url ? fmt(S.hostedElsewhere, { url }) : S.none;
  }

  function render(p) {
    player = p;
    $('player-heading').textContent = p.name;
    $('p-uuid').textContent = p.uuid;
    $('p-created').textContent = when(p.createdAt);
    $('p-last').textContent = when(p.lastLoginAt);
    $('p-status').textContent = !p.locked ? S.active : p.lockReason ? fmt(S.lockedWhy, { at: when(p.lockedAt), reason: p.lockReason }) : fmt(S.lockedSince, { at: when(p.lockedAt) });
    $('remove-label').textContent = fmt(S.removeConfirm, { name: p.name });
    const audit = $('audit');
    audit.replaceChildren();
    for (const e of p.audit) {
      const li = document.createElement('li');
      li.textContent = fmt(S.auditLine, { at: when(e.at), admin: e.admin, action: e.action }) + (e.detail ? ' (' + e.detail + ')' : '');
      audit.append(li);
    }
    if (p.audit.length === 0) audit.textContent = S.auditEmpty;
    updateButtons();
    return Promise.all([shown('skin-shown', p.skinHash, p.skinUrl, S.skinImage), shown('cape-shown', p.capeHash, p.capeUrl, S.capeImage)]);
  }

  function updateButtons() {
    if (!player) return;
    if ($('looks').getAttribute('aria-busy') !== 'true') {
      $('clear-skin').disabled = !player.skinHash && !player.skinUrl;
      $('clear-cape').disabled = !player.capeHash && !player.capeUrl;
    }
    if ($('lock').getAttribute('aria-busy') !== 'true') $('unlock').disabled = !player.locked;
  }

  async function open(uuid) {
    clearPlayer();
    await render(await call('GET', 'admin/players/' + uuid));
    $('player-card').hidden = false;
    $('player-heading').focus();
  }

  const onPlayer = (method, path, body) => call(method, 'admin/players/' + player.uuid + path, body);

  async function copy(id, form) {
    const input = $(id);
    try {
      await navigator.clipboard.writeText(input.value);
      say(form, S.copied, 'ok');
    } catch {
      input.focus();
      input.select();
      say(form, S.copyFailed, 'error');
    }
  }

  async function listInvites() {
    const { invites } = await call('GET', 'admin/invites');
    const list = $('invite-list');
    list.replaceChildren();
    for (const i of invites) {
      const li = document.createElement('li');
      const text = document.createElement('span');
      text.textContent = fmt(S.inviteLine, { id: i.id, uses: i.usesLeft, at: when(i.expiresAt) });
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'danger';
      b.textContent = fmt(S.revoke, { id: i.id });
      b.addEventListener('click', () =>
        act('invite', async () => {
          await call('DELETE', 'admin/invites/' + i.id);
          await listInvites();
          return fmt(S.revoked, { id: i.id });
        }),
      );
      li.append(text, b);
      list.append(li);
    }
    if (invites.length === 0) list.textContent = S.noInvites;
  }

  onSubmit('signin', async () => {
    const name = required('signin-name');
    if ($('signin-password').value === '') throw failure(S.fillIn, 0, 'signin-password');
    const result = await call('POST', 'login', { name, password: $('signin-password').value });
    await enter(result.accessToken, result.username);
  });
  $('signout').addEventListener('click', () => signOut(S.signedOut, 'ok'));
  $('refresh').addEventListener('click', () => act('dash-form', dashboard));
  onSubmit('search', () => find(false));
  $('more').addEventListener('click', () => act('search', () => find(true)));

  $('clear-skin').addEventListener('click', () => act('looks', async () => (await render(await onPlayer('DELETE', '/skin')), S.skinCleared)));
  $('clear-cape').addEventListener('click', () => act('looks', async () => (await render(await onPlayer('DELETE', '/cape')), S.capeCleared)));
  onSubmit('lock', async () => {
    await render(await onPlayer('POST', '/lock', { reason: $('lock-reason').value.trim() }));
    $('lock-reason').value = '';
    return S.lockedDone;
  });
  $('unlock').addEventListener('click', () => act('lock', async () => (await render(await onPlayer('POST', '/unlock')), S.unlockedDone)));
  onSubmit('rename', async () => {
    const p = await onPlayer('POST', '/rename', { name: required('rename-name') });
    $('rename-name').value = '';
    await render(p);
    return fmt(S.renamed, { name: p.name });
  });
  onSubmit('reset', async () => {
    const made = await onPlayer('POST', '/reset-link');
    // Without --public-url the server has no address to give: the page's own is the one the admin reached.
    $('reset-link').value = made.link || location.origin + base + '/account#reset=' + made.code;
    $('reset-out').hidden = false;
    await render(await onPlayer('GET', ''));
    return fmt(S.resetMade, { at: when(made.expiresAt) });
  });
  $('reset-copy').addEventListener('click', () => copy('reset-link', 'reset'));
  onSubmit('remove', async () => {
    const typed = required('remove-name');
    if (typed.toLowerCase() !== player.name.toLowerCase()) throw failure(S.typeName, 0, 'remove-name');
    const gone = await onPlayer('DELETE', '', { name: typed });
    clearPlayer();
    await find(false);
    say('search', fmt(S.removed, { name: gone.removed }), 'ok');
    $('search-q').focus();
  });

  onSubmit('invite', async () => {
    const uses = Number(required('invite-uses'));
    const days = Number(required('invite-days'));
    const made = await call('POST', 'admin/invites', { uses, expiresIn: Math.round(days * 86400) });
    $('invite-link').value = made.link || location.origin + base + '/account#invite=' + made.code;
    $('invite-out').hidden = false;
    await listInvites();
    return fmt(S.inviteMade, { id: made.id });
  });
  $('invite-copy').addEventListener('click', () => copy('invite-link', 'invite'));

  show('signed-out');
})();
`;

const HEADERS = pageHeaders(SCRIPT, STYLE);

type Key = keyof typeof STRINGS;

export function renderAdminPage(settings: AdminPageSettings): { html: string; headers: Record<string, string> } {
  const t = (key: Key): string => escapeHtml(STRINGS[key]);
  const title = settings.serverName === '' ? t('title') : escapeHtml(STRINGS.titleOn.replace('{server}', () => settings.serverName));
  const card = (id: string, heading: Key, body: string, hidden = false): string =>
    `<section class="card" id="${id}-card" aria-labelledby="${id}-heading"${hidden ? ' hidden' : ''}>\n<h2 id="${id}-heading">${t(heading)}</h2>\n${body}\n</section>`;
  const copyBox = (id: string, label: Key): string =>
    `<div id="${id}-out" hidden><label for="${id}-link">${t(label)}</label>\n<div class="copy"><input id="${id}-link" type="text" readonly><button type="button" class="quiet" id="${id}-copy">${t('copy')}</button></div></div>`;
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
<main id="app" data-view="signed-out" data-base="${escapeHtml(settings.basePath)}" data-strings="${escapeHtml(JSON.stringify(STRINGS))}">
<h1>${title}</h1>
<noscript><p>${t('noScript')}</p></noscript>

<div id="view-signed-out" hidden>
${card('signin', 'signInHeading', `<p class="hint">${t('signInHint')}</p>
<form id="signin" method="post" novalidate>
${field('signin-name', t('name'), 'type="text" name="name" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="16"')}
${field('signin-password', t('password'), 'type="password" name="password" autocomplete="current-password"')}
<div class="actions"><button type="submit">${t('signIn')}</button></div>
${message('signin')}
</form>`)}
</div>

<div id="view-signed-in" hidden>
<div class="bar"><p id="who" tabindex="-1"></p><button type="button" class="quiet" id="signout">${t('signOut')}</button></div>
<div class="grid">
${card('dash', 'dashboardHeading', `<form id="dash-form" novalidate>
<dl id="dash"></dl>
<div class="actions"><button type="button" class="quiet" id="refresh">${t('refresh')}</button></div>
${message('dash-form')}
</form>`)}
${card('search', 'searchHeading', `<form id="search" method="get" novalidate role="search">
<fieldset class="choice">
<legend>${t('searchBy')}</legend>
<label for="by-name"><input type="radio" id="by-name" name="by" value="name" checked>${t('byName')}</label>
<label for="by-uuid"><input type="radio" id="by-uuid" name="by" value="uuid">${t('byUuid')}</label>
</fieldset>
${field('search-q', t('searchText'), `type="search" name="q" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="${MAX_SEARCH_CHARS}"`, t('searchHint'))}
<div class="actions"><button type="submit">${t('search')}</button></div>
${message('search')}
<ul class="results" id="results" aria-label="${t('searchHeading')}"></ul>
<div class="actions"><button type="button" class="quiet" id="more" hidden>${t('more')}</button></div>
</form>`)}
</div>

<section class="card" id="player-card" aria-labelledby="player-heading" hidden>
<h2 id="player-heading" tabindex="-1"></h2>
<dl>
<dt>${t('uuid')}</dt><dd id="p-uuid" class="mono"></dd>
<dt>${t('createdAt')}</dt><dd id="p-created"></dd>
<dt>${t('lastLoginAt')}</dt><dd id="p-last"></dd>
<dt>${t('status')}</dt><dd id="p-status"></dd>
</dl>
<form id="looks" class="part" novalidate>
<h3>${t('looksHeading')}</h3>
<div class="textures">
<figure><div id="skin-shown"></div><figcaption>${t('skin')}</figcaption></figure>
<figure><div id="cape-shown"></div><figcaption>${t('cape')}</figcaption></figure>
</div>
<div class="actions"><button type="button" class="danger" id="clear-skin">${t('clearSkin')}</button><button type="button" class="danger" id="clear-cape">${t('clearCape')}</button></div>
${message('looks')}
</form>
<form id="lock" class="part" method="post" novalidate>
<h3>${t('lockHeading')}</h3>
${field('lock-reason', t('lockReason'), `type="text" name="reason" autocomplete="off" maxlength="${MAX_LOCK_REASON_CHARS}"`)}
<div class="actions"><button type="submit" class="danger">${t('lock')}</button><button type="button" class="quiet" id="unlock">${t('unlock')}</button></div>
${message('lock')}
</form>
<form id="rename" class="part" method="post" novalidate>
<h3>${t('renameHeading')}</h3>
${field('rename-name', t('newName'), 'type="text" name="name" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="16"')}
<div class="actions"><button type="submit">${t('rename')}</button></div>
${message('rename')}
</form>
<form id="reset" class="part" method="post" novalidate>
<h3>${t('resetHeading')}</h3>
<p class="hint">${t('resetHint')}</p>
<div class="actions"><button type="submit">${t('makeReset')}</button></div>
${copyBox('reset', 'resetLink')}
${message('reset')}
</form>
<form id="remove" class="part" method="post" novalidate>
<h3>${t('removeHeading')}</h3>
<label for="remove-name" id="remove-label"></label>
<input id="remove-name" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="16">
<div class="actions"><button type="submit" class="danger">${t('remove')}</button></div>
${message('remove')}
</form>
<div class="part">
<h3>${t('auditHeading')}</h3>
<ol class="audit" id="audit"></ol>
</div>
</section>

${card('invite', 'invitesHeading', `<form id="invite" method="post" novalidate>
${field('invite-uses', t('uses'), 'type="number" name="uses" min="1" step="1" value="1" inputmode="numeric"')}
${field('invite-days', t('lifetime'), 'type="number" name="days" min="1" step="1" value="7" inputmode="numeric"')}
<div class="actions"><button type="submit">${t('createInvite')}</button></div>
${copyBox('invite', 'inviteLink')}
${message('invite')}
<h3>${t('liveInvites')}</h3>
<ul class="invites" id="invite-list"></ul>
</form>`)}
</div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
  return { html, headers: { ...HEADERS } };
}
