// Who holds the connections and which go when there is no room, against sockets that only
// record being destroyed (src/connections.ts).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import { createConnections, type ConnectionRules } from '../src/connections.ts';

interface FakeSocket extends Socket {
  destroyed: boolean;
}

/** A socket from `remoteAddress` whose destroy closes it a turn later, as a real one does. */
function socketFrom(remoteAddress: string): FakeSocket {
  const socket = new EventEmitter() as unknown as FakeSocket;
  Object.assign(socket, {
    remoteAddress,
    destroyed: false,
    destroy() {
      if (socket.destroyed) return;
      socket.destroyed = true;
      process.nextTick(() => socket.emit('close'));
    },
  });
  return socket;
}

const RULES: ConnectionRules = { max: 4, perAddress: 64, trusted: (peer) => peer === '127.0.0.1', graceMs: 60_000 };

test('at the bound, the address holding the most loses a connection that has sent nothing, its oldest; a newcomer from elsewhere stays', () => {
  const c = createConnections(RULES);
  const flood = ['10.0.0.1', '10.0.0.1', '10.0.0.1'].map(socketFrom);
  const other = socketFrom('10.0.0.2');
  for (const s of [...flood, other]) c.accept(s);
  const newcomer = socketFrom('10.0.0.3');
  c.accept(newcomer);
  assert.deepEqual([...flood, other, newcomer].map((s) => s.destroyed), [true, false, false, false, false]);
  c.began(newcomer);
  assert.equal(c.admit(newcomer, false), undefined, 'served');
});

test('one that has sent nothing goes before one idle between requests, and one with a request in flight (pipelined ones counted) not while another can', () => {
  const c = createConnections(RULES);
  const [busy, idle, fresh] = ['10.0.0.1', '10.0.0.1', '10.0.0.1'].map(socketFrom);
  for (const s of [busy!, idle!, fresh!]) c.accept(s);
  // Two pipelined requests, the first answered: still busy.
  c.began(busy!);
  c.began(busy!);
  c.ended(busy!);
  c.began(idle!);
  c.ended(idle!);
  c.accept(socketFrom('10.0.0.2'));
  c.accept(socketFrom('10.0.0.3'));
  assert.deepEqual([busy, idle, fresh].map((s) => s!.destroyed), [false, false, true], 'the fresh one first');
  c.accept(socketFrom('10.0.0.4'));
  assert.deepEqual([busy, idle].map((s) => s!.destroyed), [false, true], 'then the idle one');
});

test('with every connection busy and no holder bigger than the newcomer\'s, a newcomer is counted and its request refused; past twice the bound it is closed at once', () => {
  const c = createConnections({ ...RULES, max: 2 });
  const held = ['10.0.0.1', '10.0.0.2'].map(socketFrom);
  for (const s of held) {
    c.accept(s);
    c.began(s);
  }
  // As the server calls them: accepted; then, its request begun, admitted.
  const third = socketFrom('10.0.0.3');
  c.accept(third);
  c.began(third);
  assert.equal(c.admit(third, false), 'connections');
  const fourth = socketFrom('10.0.0.4');
  c.accept(fourth);
  c.began(fourth);
  assert.equal(c.admit(fourth, false), 'connections');
  const fifth = socketFrom('10.0.0.5');
  c.accept(fifth);
  assert.equal(fifth.destroyed, true);
  assert.ok([...held, third, fourth].every((s) => !s.destroyed));
});

test("IPv6: the /56 where many /64s gather is ranked as one, and loses first", () => {
  const c = createConnections(RULES);
  const spread = ['2001:db8:0:100::1', '2001:db8:0:1ff::1', '2001:db8:0:1a0::1'].map(socketFrom);
  const single = socketFrom('2001:db8:0:200::1');
  for (const s of [single, ...spread]) c.accept(s);
  c.began(single);
  c.ended(single);
  c.accept(socketFrom('2001:db8:9::1'));
  assert.deepEqual([single, ...spread].map((s) => s.destroyed), [false, true, false, false]);
});

test('relays, trusted proxies and keyed requests are counted apart: nothing direct callers hold refuses them', () => {
  const c = createConnections({ ...RULES, max: 2 });
  const direct = ['10.0.0.1', '10.0.0.1'].map(socketFrom);
  for (const s of direct) {
    c.accept(s);
    c.began(s);
  }
  const relay = socketFrom('127.0.0.1');
  c.accept(relay);
  c.began(relay);
  assert.equal(c.admit(relay, true), undefined);
  const keyed = socketFrom('10.0.0.9');
  c.accept(keyed);
  c.began(keyed);
  assert.equal(c.admit(keyed, true), undefined, 'counted apart from its request on');
  // Busy: the two of 10.0.0.1; 10.0.0.1 holds more than the newcomer's address, so its newest goes.
  const next = socketFrom('10.0.0.8');
  c.accept(next);
  assert.deepEqual(direct.map((s) => s.destroyed), [false, true], 'the newest of the biggest holder, request and all');
  c.began(next);
  assert.equal(c.admit(next, false), undefined);
  assert.ok([relay, keyed].every((s) => !s.destroyed), 'the relay and the keyed caller were never candidates');
});

test("past an address's share, a connection is refused unless its request carries the key, and closed if it sends none in time", async () => {
  const c = createConnections({ ...RULES, perAddress: 1, graceMs: 20 });
  const first = socketFrom('10.0.0.1');
  const [second, third, fourth] = ['10.0.0.1', '10.0.0.1', '10.0.0.1'].map(socketFrom);
  for (const s of [first, second!, third!, fourth!]) c.accept(s);
  for (const s of [first, second!, third!]) c.began(s);
  assert.equal(c.admit(first, false), undefined);
  assert.equal(c.admit(second!, false), 'address_connections');
  assert.equal(c.admit(third!, true), undefined, 'with the API key');
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual([second, third, fourth].map((s) => s!.destroyed), [false, false, true], 'only the one that sent nothing is closed');
});
