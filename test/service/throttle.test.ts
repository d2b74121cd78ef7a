// The password-guessing throttle and the fair hash pool, against the in-memory store and a test
// clock (throttle-setup.ts). These count checks and read a clock of their own, so they run beside
// other files; the failed-login floor, timed on the real clock, is login-floor.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { throttledUntil, type LoginClient } from '../../src/service/throttle.ts';
import { direct, RELAY, setup, until } from './throttle-setup.ts';

test('the wait is 0 for 5 failures, then 1 s, doubling, at most 15 minutes; another number of free failures shifts it', () => {
  assert.equal(throttledUntil({ failures: 4, lastAt: 100 }), 0);
  assert.equal(throttledUntil({ failures: 5, lastAt: 100 }), 1100);
  assert.equal(throttledUntil({ failures: 6, lastAt: 100 }), 2100);
  assert.equal(throttledUntil({ failures: 9, lastAt: 100 }), 16_100);
  assert.equal(throttledUntil({ failures: 40, lastAt: 100 }), 100 + 15 * 60 * 1000);
  assert.equal(throttledUntil({ failures: 49, lastAt: 100 }, 50), 0);
  assert.equal(throttledUntil({ failures: 50, lastAt: 100 }, 50), 1100);
});

test('from the 6th attempt of one client after 5 failures: 429 with the wait, and no password checked', async () => {
  const { checks, service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  const me = { from: direct('10.0.0.1') };
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong', me), { kind: 'unauthorized' });
  const checked = checks.count;
  await assert.rejects(service.login('ALICE', 'right-password', me), {
    kind: 'throttled',
    retryAfter: 1,
    message: 'Too many failed logins for this name; try again in 1 s',
    rule: 'throttle',
  });
  assert.equal(checks.count, checked, 'a throttled attempt checks nothing');
  advance(1000);
  await assert.rejects(service.login('alice', 'wrong', me), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'right-password', me), { kind: 'throttled', retryAfter: 2 });
  advance(2000);
  await service.login('alice', 'right-password', me);
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong', me), { kind: 'unauthorized' }, 'a success reset the count');
});

test("a guesser slows down only itself: after 12 guesses from one address, the player's login from another is checked and accepted", async () => {
  const { service, addPlayer } = setup();
  await addPlayer('Alice');
  const guesser = { from: direct('10.0.0.66') };
  const refused = [];
  for (let i = 0; i < 12; i++) refused.push(await service.login('alice', `guess-${i}`, guesser).catch((err) => err.kind));
  assert.deepEqual(refused, [...Array(5).fill('unauthorized'), ...Array(7).fill('throttled')]);
  assert.equal((await service.login('alice', 'right-password', { from: direct('10.0.0.1') })).username, 'Alice');
  await assert.rejects(service.login('alice', 'guess-12', guesser), { kind: 'throttled' }, "the player's success does not free the guesser");
});

test('past the ceiling of 50 failures from all clients the name waits for everyone; a password refused once is checked on a retry within a minute', async () => {
  const { checks, service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  for (let c = 0; c < 10; c++) {
    for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `guess-${c}-${i}`, { from: direct(`10.0.1.${c}`) }), { kind: 'unauthorized' });
  }
  // Seven more, each after the name's wait: the next wait is 128 s, longer than the longest
  // between two checks of a name held back (MAX_THROTTLED_CHECK_MS, a minute).
  for (const wait of [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000]) {
    advance(wait);
    await assert.rejects(service.login('alice', `guess-after-${wait}`, { from: direct('10.0.1.99') }), { kind: 'unauthorized' });
  }
  const player = { from: direct('10.0.0.1') };
  const checked = checks.count;
  await assert.rejects(service.login('alice', 'right-password', player), { kind: 'throttled', retryAfter: 3 }, 'held back by others: try again in a moment');
  await assert.rejects(service.login('alice', 'guess-new', { from: direct('10.0.2.1') }), { kind: 'throttled' });
  advance(60_000);
  await assert.rejects(service.login('alice', 'guess-newer', { from: direct('10.0.2.1') }), { kind: 'throttled' }, 'a password never refused before is not the one checked');
  assert.equal(checks.count, checked);
  assert.equal((await service.login('alice', 'right-password', player)).username, 'Alice', 'the retry of a refused password is checked');
  assert.equal(checks.count, checked + 1);
});

test('through a relay that forwards no clientToken, guessing at 2 a second: the player retrying every 2 s is in within two retries', async () => {
  const { checks, service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  const relayed = { from: RELAY };
  let guess = 0;
  const guessFor = async (ms: number) => {
    for (let t = 0; t < ms; t += 500) {
      await assert.rejects(service.login('alice', `guess-${guess++}`, relayed));
      advance(500);
    }
  };
  await guessFor(3000); // 6 guesses: 5 checked, then throttled
  const checked = checks.count;
  let tries = 0;
  for (;;) {
    tries++;
    const answer = await service.login('alice', 'right-password', relayed).catch((err) => err.kind);
    if (typeof answer === 'object') break;
    assert.equal(answer, 'throttled');
    await guessFor(2000);
    assert.ok(tries < 3, 'in within two retries');
  }
  assert.equal(checks.count, checked + 1, "only the player's retry was checked, none of the guesses");
  // With a clientToken each launcher is a client of its own: the guesser's failures are not the player's.
  await assert.rejects(service.login('alice', 'wrong', relayed));
  for (let i = 0; i < 6; i++) await assert.rejects(service.login('alice', `guess-${i}`, { from: { id: 'token guesser', shared: false } }));
  assert.equal((await service.login('alice', 'right-password', { from: { id: 'token player', shared: false } })).username, 'Alice');
});

test('past the ceiling, a client that logged in to the name before is held by its own failures only; rotating clientTokens lock no one out', async () => {
  const { service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  const token = (id: string): { from: LoginClient } => ({ from: { id: `token ${id}`, shared: false, device: `token ${id}` } });
  assert.equal((await service.login('alice', 'right-password', token('player'))).username, 'Alice');
  // 10 tokens × 5 wrong guesses: the name's ceiling; then a new token for each guess.
  for (let c = 0; c < 10; c++) for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `guess-${c}-${i}`, token(`rotated-${c}`)), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'guess-new', token('rotated-new')), { kind: 'throttled' }, 'a new client is held by the ceiling');
  await assert.rejects(service.login('alice', 'right-password', token('new-device')), { kind: 'throttled' }, 'so is the player on a device never seen');
  assert.equal((await service.login('alice', 'right-password', token('player'))).username, 'Alice', 'the known client gets in at once');
  const elsewhere = { from: { id: '10.9.9.9', shared: false, address: '10.9.9.9', device: 'token player' } };
  assert.equal((await service.login('alice', 'right-password', elsewhere)).username, 'Alice', 'the same launcher from an address never seen, straight to this service');
  // Its own failures still hold it.
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `typo-${i}`, token('player')), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'right-password', token('player')), { kind: 'throttled' });
  advance(1000);
  assert.equal((await service.login('alice', 'right-password', token('player'))).username, 'Alice');
});

// Rule: a known launcher's own count is its own, not its address's: a guesser behind the same
// address (a household's NAT, a LAN party) fills the address's count, and the launcher that
// logged in before still gets in; its own typos hold it as before.
test("a known launcher is held by its own failures, not by its address's: a guesser behind the same NAT does not lock it out", async () => {
  const { service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  const at = (device?: string): { from: LoginClient } => ({ from: { ...direct('192.0.2.7'), device: device && `token ${device}` } });
  assert.equal((await service.login('alice', 'right-password', at('player'))).username, 'Alice');
  // Guesses from the same address, with new clientTokens and with none: the address's count is past its free failures.
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `guess-${i}`, at(i % 2 ? `guesser-${i}` : undefined)), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'guess-new', at()), { kind: 'throttled' }, 'the address is held');
  await assert.rejects(service.login('alice', 'right-password', at('new-device')), { kind: 'throttled' }, 'so is a launcher never seen there');
  assert.equal((await service.login('alice', 'right-password', at('player'))).username, 'Alice', 'the known launcher gets in at once');
  // Its success clears its own count only: the address stays held.
  await assert.rejects(service.login('alice', 'right-password', at()), { kind: 'throttled' }, "the player's success did not clear the guesser's count");
  // Its own failures hold it.
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `typo-${i}`, at('player')), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'right-password', at('player')), { kind: 'throttled' });
  advance(1000);
  assert.equal((await service.login('alice', 'right-password', at('player'))).username, 'Alice');
});

// Rule: a success clears the count of the launcher that sent it, also one kept while it was
// known and then not (its tokens ended): known again, it starts from zero, not from old typos.
test("a launcher whose tokens ended signs in again from zero: its success clears the count it had while known", async () => {
  const { service, addPlayer } = setup();
  await addPlayer('Alice');
  const at = (device: string): { from: LoginClient } => ({ from: { ...direct('192.0.2.8'), device: `token ${device}` } });
  assert.equal((await service.login('alice', 'right-password', at('player'))).username, 'Alice');
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `typo-${i}`, at('player')), { kind: 'unauthorized' });
  await service.revokeSessions('Alice');
  // Unknown now, so counted by its address, which has no failures: in.
  assert.equal((await service.login('alice', 'right-password', at('player'))).username, 'Alice');
  // Known again: a typo is its first failure, not its sixth.
  await assert.rejects(service.login('alice', 'one-typo', at('player')), { kind: 'unauthorized' });
});

test('past the ceiling, a guesser replaying a refused password with a clientToken takes none of the checks of a relay player who sends none', async () => {
  const { service, addPlayer } = setup();
  await addPlayer('Alice');
  for (let c = 0; c < 10; c++) for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `guess-${c}-${i}`, { from: { id: `token rotated-${c}`, shared: false } }), { kind: 'unauthorized' });
  const replayer = { from: { id: 'token replayer', shared: false } };
  await assert.rejects(service.login('alice', 'replayed', replayer), { kind: 'throttled' });
  await assert.rejects(service.login('alice', 'right-password', { from: RELAY }), { kind: 'throttled' }, 'the player, before the first check is due');
  await assert.rejects(service.login('alice', 'replayed', replayer), { kind: 'unauthorized' }, "the replay takes its kind's check");
  assert.equal((await service.login('alice', 'right-password', { from: RELAY })).username, 'Alice', "the player's retry takes its own kind's");
});

test('unknown names are throttled the same way, and a name forgotten after an hour starts again', async () => {
  const { service, advance } = setup();
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('Nobody', 'x'), { kind: 'unauthorized' });
  await assert.rejects(service.login('nobody', 'x'), { kind: 'throttled' });
  advance(60 * 60 * 1000 + 1);
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('nobody', 'x'), { kind: 'unauthorized' });
});

test('an unknown name waits in the pool\'s line as a check does (a full pool refuses it alike), then leaves its slot at once and waits as long as a check ran, hashing nothing', async () => {
  const { checks, service, addPlayer } = setup({ hashConcurrency: 1, hashQueue: 1 });
  await addPlayer('Alice');
  await addPlayer('Bob');
  // The first check is timed at 300 ms or more: an unknown name then waits that long once it has its slot.
  checks.hold = new Promise((r) => setTimeout(r, 300));
  await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  let release!: () => void;
  checks.hold = new Promise((r) => (release = r));
  const holding = service.login('alice', 'right-password');
  await until(() => service.hashLoad().running === 1);
  let answered = false;
  const unknown = assert.rejects(service.login('nobody', 'x'), { kind: 'unauthorized', message: 'Wrong login or password' }).then(() => (answered = true));
  await until(() => service.hashLoad().waiting === 1);
  assert.deepEqual(service.hashLoad(), { running: 1, waiting: 1 }, 'the unknown name waits in line, as a check would');
  await assert.rejects(service.login('bob', 'right-password'), { kind: 'busy' }, 'full: a check is refused');
  await assert.rejects(service.login('nobodyelse', 'x'), { kind: 'busy' }, 'and an unknown name alike');
  // Alice's second check runs 300 ms or more too: whichever check the unknown name draws, it waits that long.
  await new Promise((r) => setTimeout(r, 300));
  const slotted = performance.now();
  release(); // Alice's check ends: the unknown name has its slot
  await until(() => service.hashLoad().running === 0 && service.hashLoad().waiting === 0);
  assert.equal(answered, false, 'given its slot, it left it at once, and still waits');
  await unknown;
  assert.ok(performance.now() - slotted >= 250, `answered ${Math.round(performance.now() - slotted)} ms after its slot`);
  await holding;
  assert.equal(checks.count, 2, 'no check for the unknown names');
});

test('one check of a name at a time: other logins of it wait outside the pool, and other names go first', async () => {
  const { checks, service, addPlayer } = setup({ hashConcurrency: 1, hashQueue: 1 });
  await addPlayer('Alice');
  await addPlayer('Bob');
  let release!: () => void;
  checks.hold = new Promise((r) => (release = r));
  const alice = Array.from({ length: 5 }, () => service.login('alice', 'right-password'));
  await until(() => service.hashLoad().running === 1);
  const bob = service.login('bob', 'right-password');
  await until(() => service.hashLoad().waiting === 1);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(service.hashLoad(), { running: 1, waiting: 1 }, "Alice's other four hold no place; Bob's check has the queue's");
  release();
  await Promise.all([...alice, bob]);
  assert.equal(checks.count, 6);
});

test('refusals over a limit do no work and count no failure', async () => {
  const { checks, service, addPlayer } = setup();
  await addPlayer('Alice');
  for (let i = 0; i < 10; i++) {
    await assert.rejects(service.login('alice', 'x'.repeat(257)), { kind: 'invalid', message: 'Field "password" is longer than 256 bytes' });
  }
  await assert.rejects(service.login('alice', '€'.repeat(86)), { kind: 'invalid' }, '258 bytes in 86 characters');
  // A lone surrogate would be hashed as U+FFFD, making "\ud800x" and "\udfffx" one password.
  await assert.rejects(service.login('alice', '\ud800x'), { kind: 'invalid', message: 'Field "password" is not well-formed Unicode' });
  await assert.rejects(service.addUser({ name: 'Bob', password: '\udfffx' }), { kind: 'invalid', message: 'The password is not well-formed Unicode' });
  await assert.rejects(async () => service.hasJoined('alice', '\udfff'), { kind: 'invalid', message: 'Field "serverID" is not well-formed Unicode' });
  assert.equal(checks.count, 0);
  await service.login('alice', 'right-password');
});

test('parallel guesses once the wait is over: only one reaches a check', async () => {
  const { checks, service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  advance(1000);
  const before = checks.count;
  // The first is counted as a failure before its hash is computed, so the other nine see it.
  const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => service.login('alice', `guess-${i}`)));
  const kinds = results.map((r) => (r.status === 'rejected' ? (r.reason as { kind: string }).kind : 'ok')).sort();
  assert.deepEqual(kinds, [...Array(9).fill('throttled'), 'unauthorized']);
  assert.equal(checks.count, before + 1);
});

test('when every hash slot and queue place is taken, a login is refused at once with busy, and counts no failure', async () => {
  const { checks, service, addPlayer } = setup({ hashConcurrency: 1, hashQueue: 1 });
  for (const name of ['Alice', 'Bob', 'Carol']) await addPlayer(name);
  let release!: () => void;
  checks.hold = new Promise((r) => (release = r));
  const first = service.login('alice', 'right-password');
  const second = service.login('bob', 'right-password');
  await until(() => service.hashLoad().waiting === 1);
  for (let i = 0; i < 8; i++) {
    await assert.rejects(service.login('carol', 'wrong'), { kind: 'busy', retryAfter: 1, message: 'The server is busy; try again in a moment' });
  }
  assert.deepEqual(service.hashLoad(), { running: 1, waiting: 1 });
  release();
  await Promise.all([first, second]);
  assert.deepEqual(service.hashLoad(), { running: 0, waiting: 0 });
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('carol', 'wrong'), { kind: 'unauthorized' }, 'the busy refusals counted nothing');
});

// Rule: a login whose caller left while it waited for a hash slot gives the slot up unchecked
// (a restart's flood of logins that time out costs no hash work), and counts nothing.
test('a login whose caller left while it waited is dropped without a check, and does not count toward the throttle', async () => {
  const { checks, service, addPlayer } = setup({ hashConcurrency: 1, hashQueue: 4 });
  for (const name of ['Alice', 'Bob', 'Carol']) await addPlayer(name);
  for (let i = 0; i < 4; i++) await assert.rejects(service.login('bob', 'wrong'), { kind: 'unauthorized' });
  let release!: () => void;
  checks.hold = new Promise((r) => (release = r));
  const running = service.login('alice', 'right-password');
  await until(() => service.hashLoad().running === 1);
  const left = new AbortController();
  const waiting = service.login('bob', 'right-password', { callerLeft: left.signal });
  const staying = service.login('carol', 'right-password', { callerLeft: new AbortController().signal });
  await until(() => service.hashLoad().waiting === 2);
  left.abort();
  release();
  await assert.rejects(waiting, { kind: 'busy', message: 'The caller left before its login was checked' });
  await running;
  await staying;
  assert.equal(checks.count, 4 + 2, 'the abandoned login was not checked');
  assert.deepEqual(service.hashLoad(), { running: 0, waiting: 0 });
  // 4 real failures only (5 are free): a 5th wrong password is checked, and only then the 6th throttled.
  await assert.rejects(service.login('bob', 'wrong'), { kind: 'unauthorized' });
  await assert.rejects(service.login('bob', 'wrong'), { kind: 'throttled' });
});

test('a guesser who sends each guess twice (refused, then retried) gets checks ever further apart, at most one a minute', async () => {
  const { checks, service, addPlayer, advance } = setup();
  await addPlayer('Alice');
  const relayed = { from: RELAY };
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', `guess-${i}`, relayed), { kind: 'unauthorized' });
  const checked = checks.count;
  // Ten minutes of replays, every half second: each new guess is refused once and then retried.
  for (let t = 0, guess = 0; t < 10 * 60 * 1000; t += 500) {
    const answer = await service.login('alice', `replayed-${guess}`, relayed).catch((err) => err.kind);
    if (answer === 'unauthorized') guess++;
    advance(500);
  }
  const got = checks.count - checked;
  // 2.5, 5, 10, 20, 40 s, then a minute each: about 13 in ten minutes, not the 240 of a fixed 2.5 s.
  assert.ok(got >= 5 && got <= 16, `${got} replayed guesses checked in ten minutes`);
});

test('an unknown name whose caller has left is dropped and uncounted as a known one is, so neither tells them apart', async () => {
  const { service, addPlayer } = setup();
  await addPlayer('Alice');
  await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' }); // a check timed: unknown names now wait, not hash
  const left = new AbortController();
  left.abort();
  for (const name of ['alice', 'nobody']) {
    for (let i = 0; i < 6; i++) await assert.rejects(service.login(name, 'x', { callerLeft: left.signal }), { kind: 'busy', message: 'The caller left before its login was checked' }, name);
  }
  await assert.rejects(service.login('nobody', 'x'), { kind: 'unauthorized' }, 'none of the six counted');
});
