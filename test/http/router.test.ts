// The router alone: paths under a base path, `:name` parameters, a path without parameters first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpError } from '../../src/http/envelope.ts';
import { createRouter, type Handler } from '../../src/http/router.ts';

const handler = (name: string): Handler => Object.assign(async () => {}, { label: name });
const labelOf = (found: unknown): string => (found as { handler: { label: string } }).handler.label;

test('a path without parameters is found before a pattern that would take it, whatever their order', () => {
  const route = createRouter('/mc', {
    '/users/:who': { GET: handler('pattern') },
    '/users/search': { GET: handler('static') },
  });
  assert.equal(labelOf(route('GET', '/mc/users/search')), 'static');
  const found = route('GET', '/mc/users/alice');
  assert.equal(labelOf(found), 'pattern');
  assert.deepEqual((found as { params: object }).params, { who: 'alice' });
  assert.equal((found as { route: string }).route, '/users/:who');
});

test('outside the base path, an empty parameter or an unknown path: 404; a known path by another method: 405 naming the others', () => {
  const route = createRouter('/mc', { '/users/:who': { GET: handler('get'), DELETE: handler('delete') }, '/auth': { POST: handler('post') } });
  for (const path of ['/auth', '/mc/users/', '/mc/users', '/mc/nothing']) {
    const refused = route('GET', path);
    assert.ok(refused instanceof HttpError && refused.status === 404, path);
  }
  const wrong = route('PUT', '/mc/users/alice');
  assert.ok(wrong instanceof HttpError);
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.allow, 'GET, DELETE, HEAD');
  assert.equal(labelOf(route('HEAD', '/mc/users/alice')), 'get', 'a HEAD is answered as the GET');
  assert.equal((route('GET', '/mc/auth') as HttpError).headers.allow, 'POST');
});
