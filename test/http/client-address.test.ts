// The client address (for the log and --address-login-limit): the socket's peer; with
// --trust-proxy the last X-Forwarded-For entry (the one the proxy in front appended), trimmed,
// when it is an IP address, else the peer. Without --trust-proxy the header is ignored.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { clientAddress } from '../../src/http/client-address.ts';

/** A request from `peer` with these headers (as Node gives them: lower-case names). */
function from(peer: string | undefined, headers: Record<string, string | string[]> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

test('without --trust-proxy: the socket\'s peer, whatever X-Forwarded-For says', () => {
  assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), false), '127.0.0.1');
  assert.equal(clientAddress(from('::1'), false), '::1');
  assert.equal(clientAddress(from(undefined), false), '', 'a socket already gone');
});

test('with --trust-proxy: the last entry, trimmed, which is the one the proxy appended', () => {
  assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), true), '203.0.113.9');
  assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': '10.0.0.1, 198.51.100.7' }), true), '198.51.100.7', 'a client can forge the entries before it');
  assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': ' 1.1.1.1 ,\t198.51.100.7  ' }), true), '198.51.100.7');
  assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': '2001:db8::1' }), true), '2001:db8::1');
  assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': ['1.1.1.1', '198.51.100.7'] }), true), '198.51.100.7', 'repeated headers: the last');
});

test('with --trust-proxy, a missing or malformed header falls back to the socket\'s peer', () => {
  for (const value of ['', ' ', 'unknown', '203.0.113.9, ', '203.0.113.9,garbage', '203.0.113.9:443', '[2001:db8::1]', '1.2.3', '999.1.1.1', '203.0.113.9 198.51.100.7']) {
    assert.equal(clientAddress(from('127.0.0.1', { 'x-forwarded-for': value }), true), '127.0.0.1', JSON.stringify(value));
  }
  assert.equal(clientAddress(from('127.0.0.1'), true), '127.0.0.1', 'no header');
  assert.equal(clientAddress(from('127.0.0.1', { forwarded: 'for=203.0.113.9' }), true), '127.0.0.1', 'only X-Forwarded-For counts');
});
