// Who is calling (for the log and the per-address rules): the socket's peer; from a peer listed
// in --trust-proxy the last X-Forwarded-For entry (the one that proxy appended), trimmed, when it
// is an IP address, else the peer. IPv6 clients are counted by their /64. A relay (the API key,
// or the address in --relay and not a trusted proxy) is exempt from per-address rules.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { addressList, callerOf, perAddressKey, type AddressList } from '../../src/http/client-address.ts';

/** A request from `peer` with these headers (as Node gives them: lower-case names). */
function from(peer: string | undefined, headers: Record<string, string | string[]> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

/** callerOf's settings: the relays, the trusted proxies, and whether the request carries the API key. */
type Settings = [relays: AddressList, proxies: AddressList, withApiKey: boolean];
const settings = (proxies: string, relays = '127.0.0.1,::1', withApiKey = false): Settings => [addressList(relays), addressList(proxies), withApiKey];
const address = (req: IncomingMessage, proxies: string): string => callerOf(req, ...settings(proxies)).address;

test('addressList: addresses and CIDR ranges of either family; IPv4-mapped IPv6 is its IPv4 address', () => {
  const list = addressList('127.0.0.1, ::1,10.0.0.0/8,192.168.4.0/22, 2001:db8:ab00::/40');
  for (const yes of ['127.0.0.1', '::ffff:127.0.0.1', '::1', '0:0:0:0:0:0:0:1', '10.255.1.2', '192.168.7.255', '2001:db8:abff::1', '2001:DB8:AB00::', '::ffff:10.1.1.1']) assert.ok(list(yes), yes);
  for (const no of ['127.0.0.2', '::2', '11.0.0.1', '192.168.8.0', '2001:db8:ac00::1', '', 'localhost', '::ffff:11.0.0.1', '10.0.0.1x']) assert.ok(!list(no), no);
  assert.ok(addressList('0.0.0.0/0')('203.0.113.9') && !addressList('0.0.0.0/0')('2001:db8::1'), 'a family does not match the other');
  assert.ok(addressList('::/0')('2001:db8::1') && addressList('::ffff:0:0/96')('::ffff:1.2.3.4') === false, 'mapped addresses are matched as IPv4');
  assert.ok(!addressList('')('127.0.0.1'), 'an empty list holds nothing');
  for (const bad of ['x', '10.0.0.0/33', '1.2.3', '::/129', '10.0.0.1/a', '10.0.0.1/']) assert.throws(() => addressList(bad), /is not an IP address or CIDR range/, bad);
});

test('perAddressKey: IPv4 as it is (also mapped), IPv6 cut to its /64', () => {
  assert.equal(perAddressKey('203.0.113.9'), '203.0.113.9');
  assert.equal(perAddressKey('::ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(perAddressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(perAddressKey('2001:db8:1:2::7'), '2001:db8:1:2::/64');
  assert.equal(perAddressKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(perAddressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(perAddressKey('::1'), '0:0:0:0::/64');
});

test('from a peer not listed as a proxy: the socket\'s peer, whatever X-Forwarded-For says', () => {
  assert.equal(address(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), ''), '127.0.0.1');
  assert.equal(address(from('127.0.1.9', { 'x-forwarded-for': '203.0.113.9' }), '127.0.0.1,10.0.0.0/8'), '127.0.1.9');
  assert.equal(address(from(undefined), ''), '', 'a socket already gone');
});

test('from a listed proxy: the last entry, trimmed, which is the one the proxy appended', () => {
  const proxy = '127.0.0.1,10.0.0.0/8';
  assert.equal(address(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), proxy), '203.0.113.9');
  assert.equal(address(from('10.2.3.4', { 'x-forwarded-for': '10.0.0.1, 198.51.100.7' }), proxy), '198.51.100.7', 'a client can forge the entries before it');
  assert.equal(address(from('::ffff:127.0.0.1', { 'x-forwarded-for': ' 1.1.1.1 ,\t198.51.100.7  ' }), proxy), '198.51.100.7');
  assert.equal(address(from('127.0.0.1', { 'x-forwarded-for': '2001:db8::1' }), proxy), '2001:db8:0:0::/64');
  assert.equal(address(from('127.0.0.1', { 'x-forwarded-for': ['1.1.1.1', '198.51.100.7'] }), proxy), '198.51.100.7', 'repeated headers: the last');
});

test('from a listed proxy, a missing or malformed header falls back to the socket\'s peer', () => {
  for (const value of ['', 'unknown', '203.0.113.9:1234', '1.1.1.1, not-an-ip', '[2001:db8::1]', '1.1.1.1,']) {
    assert.equal(address(from('127.0.0.1', { 'x-forwarded-for': value }), '127.0.0.1'), '127.0.0.1', JSON.stringify(value));
  }
  assert.equal(address(from('127.0.0.1'), '127.0.0.1'), '127.0.0.1', 'no header');
  assert.equal(address(from('127.0.0.1', { forwarded: 'for=203.0.113.9' }), '127.0.0.1'), '127.0.0.1', 'only X-Forwarded-For counts');
});

test('a relay: the API key, or an address in --relay that is not a trusted proxy', () => {
  const relay = (req: IncomingMessage, s: Settings): boolean => callerOf(req, ...s).relay;
  assert.ok(relay(from('127.0.0.1'), settings('')), 'loopback, by the default list');
  assert.ok(relay(from('::ffff:127.0.0.1'), settings('')));
  assert.ok(relay(from('::1'), settings('')));
  assert.ok(!relay(from('127.0.1.5'), settings('')));
  assert.ok(relay(from('127.0.1.5'), settings('', '', true)), 'any address with the API key');
  assert.ok(!relay(from('127.0.0.1'), settings('127.0.0.1')), 'a trusted proxy is not a relay');
  assert.ok(!relay(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), settings('127.0.0.1')), 'its clients are direct');
  assert.ok(relay(from('127.0.0.1', { 'x-forwarded-for': '192.0.2.7' }), settings('127.0.0.1', '192.0.2.0/24')), 'a listed relay behind the proxy');
  assert.ok(relay(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), settings('127.0.0.1', '', true)), 'the key, behind the proxy');
  assert.equal(callerOf(from('127.0.1.5'), ...settings('', '', true)).address, '127.0.1.5', 'a relay\'s address is its own');
});
