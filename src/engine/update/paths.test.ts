import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../errors.ts';
import { ensureSlot, findSlot, isValidPath, readPath, removePath, writePath } from './paths.ts';

test('reads nested paths and literal dotted keys', () => {
  const document = { a: { b: { c: 1 } }, 'x.y': 2, m: { 'n.o': 3 }, 'p.q': { r: 4 } };
  assert.equal(readPath(document, 'a.b.c'), 1);
  assert.deepEqual(readPath(document, 'a.b'), { c: 1 });
  assert.equal(readPath(document, 'x.y'), 2);
  assert.equal(readPath(document, 'm.n.o'), 3);
  assert.equal(readPath(document, 'p.q.r'), 4);
  assert.equal(readPath(document, 'a.b.c.d'), undefined);
  assert.equal(readPath(document, 'missing'), undefined);
  assert.equal(readPath(document, 'toString'), undefined, 'inherited properties are not fields');
});

test('a literal key wins over the nested path when both exist', () => {
  const document = { 'a.b': 'literal', a: { b: 'nested' } };
  assert.equal(readPath(document, 'a.b'), 'literal');
  const slot = findSlot(document, 'a.b');
  assert.equal(slot?.key, 'a.b');
});

test('writes create missing objects and stop at non-objects', () => {
  const document: Record<string, unknown> = { s: 'text', n: null, list: [1], o: {} };
  writePath(document, 'a.b.c', 1);
  writePath(document, 'o.d', 2);
  assert.deepEqual(document.a, { b: { c: 1 } });
  assert.deepEqual(document.o, { d: 2 });
  for (const [path, blocker] of [['s.x', 's'], ['n.x', 'n'], ['list.x', 'list'], ['a.b.c.d', 'a.b.c']]) {
    assert.throws(
      () => ensureSlot(document, path as string),
      (error: unknown) => error instanceof EngineError && error.message === `cannot create [${path}]: [${blocker}] is not an object`,
    );
  }
});

test('removes values; missing ones report false', () => {
  const document: Record<string, unknown> = { a: { b: 1, c: 2 }, 'x.y': 3 };
  assert.equal(removePath(document, 'a.b'), true);
  assert.equal(removePath(document, 'x.y'), true);
  assert.equal(removePath(document, 'a.z'), false);
  assert.deepEqual(document, { a: { c: 2 } });
});

test('no write creates or follows a reserved segment (__proto__, constructor, prototype)', () => {
  for (const path of ['__proto__.polluted', 'constructor.prototype.polluted', 'a.prototype', 'constructor', '__proto__']) {
    const document: Record<string, unknown> = { a: {} };
    assert.throws(
      () => writePath(document, path, true),
      (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && /field \[.*\] is not allowed: \[.*\] is a reserved name/.test(error.message),
      path,
    );
    assert.deepEqual(document, { a: {} }, path);
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
  // Reads see only own keys: an own __proto__ key (as JSON.parse makes it) is an ordinary value.
  const document = JSON.parse('{"__proto__": {"hasOwnProperty": 1}, "plain": {}}') as Record<string, unknown>;
  assert.equal(readPath(document, '__proto__.hasOwnProperty'), 1);
  assert.equal(readPath(document, 'plain.hasOwnProperty'), undefined);
  assert.equal(readPath(document, 'constructor'), undefined);
  assert.equal(removePath(document, 'plain.constructor'), false);
  assert.equal(typeof Object.prototype.hasOwnProperty, 'function');
});

test('path syntax', () => {
  for (const path of ['a', 'a.b', 'a.b.c', 'a-b_c']) assert.equal(isValidPath(path), true, path);
  for (const path of ['', '.a', 'a.', 'a..b', '.']) assert.equal(isValidPath(path), false, path);
});
