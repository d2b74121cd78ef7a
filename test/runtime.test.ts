import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runtimeProblem } from '../src/runtime.ts';

test('Node before 22.13 is refused with the version it needs', () => {
  assert.equal(runtimeProblem({ node: '20.20.2' }), 'mcauth needs Node.js 22.13 or later; this is Node.js 20.20.2.');
  assert.match(runtimeProblem({ node: '22.12.0' }) ?? '', /22\.13/);
  assert.equal(runtimeProblem({ node: '22.13.0' }), undefined);
  assert.equal(runtimeProblem({ node: '26.10.0' }), undefined);
});

test('Deno is judged by its own version, not the Node version it reports', () => {
  assert.equal(runtimeProblem({ node: '20.11.1', deno: '2.2.0' }), undefined);
  assert.match(runtimeProblem({ node: '26.0.0', deno: '1.46.3' }) ?? '', /Deno 2\.2/);
});
