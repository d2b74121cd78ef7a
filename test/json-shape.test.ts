import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJson } from '../src/http/body.ts';
import { jsonShapeProblem } from '../src/json-shape.ts';

const refused = (text: string, message: RegExp): void => assert.throws(() => parseJson(Buffer.from(text)), { status: 400, message }, text);

test('the shapes this service takes pass untouched', () => {
  for (const text of ['{"login":"a","password":"b\\"}{[,"}', '["a","b"]', '{"usernames":["x"]}', '{"a":{"b":[1,2.5e3,-0.1,true,false,null]}}', '"x"', '{}']) {
    assert.equal(jsonShapeProblem(text), undefined, text);
  }
  assert.deepEqual(parseJson(Buffer.from('{"login":"a","password":"p"}')), { login: 'a', password: 'p' });
});

test('a key given twice is refused, also when spelled with an escape', () => {
  refused('{"login":"a","login":"b"}', /the key "login" twice/);
  refused('{"login":"a","\\u006cogin":"b"}', /the key "login" twice/);
  refused('{"a":{"k":1,"k":2}}', /the key "k" twice/);
  assert.equal(jsonShapeProblem('{"a":{"k":1},"b":{"k":2}}'), undefined, 'the same key in two objects');
  assert.equal(jsonShapeProblem('["k","k"]'), undefined, 'strings in an array are no keys');
  assert.equal(jsonShapeProblem('{"k":"k"}'), undefined, 'a value equal to its key');
});

test('nesting deeper than 8 levels is refused before parsing', () => {
  assert.equal(jsonShapeProblem('[[[[[[[["deep"]]]]]]]]'), undefined);
  refused('[[[[[[[[["deep"]]]]]]]]]', /nested deeper than 8 levels/);
  refused('['.repeat(30_000), /nested deeper/);
  assert.equal(jsonShapeProblem('"[[[[[[[[[[[[[[["'), undefined, 'brackets in a string do not count');
});

test('an overlong number is refused; other malformed text falls to JSON.parse', () => {
  refused('{"a":' + '9'.repeat(40) + '}', /number longer than 32 characters/);
  refused('{"a":1e999999999999999999999999999999999}', /number longer/);
  refused('{"a":1e999999}', /number out of range/);
  refused('[-1e400]', /number out of range/);
  assert.equal(jsonShapeProblem('[1e308,-2.5e-400,0]'), undefined, 'large but finite; tiny rounds to 0');
  refused('{"a":"unterminated', /not valid JSON/);
  refused('{"a":"bad escape \\', /not valid JSON/);
  refused('{"\\x":1,"\\x":2}', /not valid JSON/);
});
