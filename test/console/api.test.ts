// The admin page's API, the parts decided without a server: which changes count as from another
// site, and how a search's text becomes a range of the index. test/e2e/admin-page.test.ts calls
// the API itself.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { refuseCrossSite, searchKey } from '../../src/console/api.ts';
import { HttpError } from '../../src/http/envelope.ts';

const request = (method: string, headers: Record<string, string>): IncomingMessage => ({ method, headers: { host: 'auth.example:8080', ...headers } }) as unknown as IncomingMessage;
const refused = (method: string, headers: Record<string, string>): boolean => {
  try {
    refuseCrossSite(request(method, headers));
    return false;
  } catch (err) {
    assert.ok(err instanceof HttpError && err.status === 403);
    return true;
  }
};

test('a change is refused when its Origin names another host, or Sec-Fetch-Site says another site; a read never is', () => {
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    assert.equal(refused(method, {}), false, 'no Origin (a client that is no browser)');
    assert.equal(refused(method, { origin: 'http://auth.example:8080' }), false);
    assert.equal(refused(method, { origin: 'https://auth.example:8080', 'sec-fetch-site': 'same-origin' }), false, 'behind a TLS proxy that keeps Host');
    assert.equal(refused(method, { origin: 'http://auth.example' }), true, 'another port');
    assert.equal(refused(method, { origin: 'http://evil.example' }), true);
    assert.equal(refused(method, { origin: 'null' }), true);
    assert.equal(refused(method, { 'sec-fetch-site': 'cross-site' }), true);
    assert.equal(refused(method, { 'sec-fetch-site': 'same-site' }), true);
    assert.equal(refused(method, { 'sec-fetch-site': 'none' }), true);
  }
  assert.equal(refused('GET', { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }), false);
  // Behind a proxy that sends Host without the port the browser used: --public-url's origin is the page's.
  const behindProxy = (origin: string, publicUrl: string): boolean => {
    try {
      refuseCrossSite({ method: 'POST', headers: { host: 'auth.example', origin } } as unknown as IncomingMessage, publicUrl);
      return false;
    } catch {
      return true;
    }
  };
  assert.equal(behindProxy('https://auth.example:8443', 'https://auth.example:8443'), false);
  assert.equal(behindProxy('https://auth.example:8443', ''), true);
  assert.equal(behindProxy('https://evil.example:8443', 'https://auth.example:8443'), true);
});

test('a name is searched by its lower-case start; a UUID by its dashed start, whatever dashes and case were typed', () => {
  assert.equal(searchKey('name', 'AlEx_'), 'alex_');
  assert.equal(searchKey('name', ''), '');
  assert.equal(searchKey('uuid', '069A79F4'), '069a79f4');
  assert.equal(searchKey('uuid', '069a79f444'), '069a79f4-44');
  assert.equal(searchKey('uuid', '069a79f4-44e9-4726-a5be-fca90e38aaf5'), '069a79f4-44e9-4726-a5be-fca90e38aaf5');
  assert.equal(searchKey('uuid', '069a79f444e94726a5befca90e38aaf5'), '069a79f4-44e9-4726-a5be-fca90e38aaf5');
  assert.equal(searchKey('uuid', '069a79f4-4'), '069a79f4-4');
  for (const [by, q] of [['name', 'a b'], ['name', 'x'.repeat(37)], ['uuid', 'xyz'], ['uuid', '0'.repeat(33)], ['email', 'a']]) {
    assert.throws(() => searchKey(by!, q!), (err) => err instanceof HttpError && err.status === 400, `${by} ${q}`);
  }
});
