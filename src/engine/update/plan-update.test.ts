import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertRejects, plan, testFields } from './fixtures.test.ts';
import { planUpdate } from './plan-update.ts';

test('doc deep-merges: objects recursively, arrays and scalars replace, null is kept', () => {
  const result = plan(
    { title: 'a', tags: ['x', 'y'], stats: { clicks: 1, last: '2024-01-01' }, extra: { keep: 1 } },
    undefined,
    { tags: ['z'], stats: { clicks: 2 }, extra: null, added: { nested: true } },
  );
  assert.deepEqual(result.source, {
    title: 'a',
    tags: ['z'],
    stats: { clicks: 2, last: '2024-01-01' },
    extra: null,
    added: { nested: true },
  });
  assert.equal(result.changed, true);
  assert.equal(result.inplaceOnly, false);
});

test('doc is applied before ops, and ops run in order on the previous result', () => {
  const result = plan({ price: 1 }, [
    { op: 'incr', field: 'price', value: 10 },
    { op: 'mul', field: 'price', value: 2 },
    { op: 'rename', field: 'price', value: 'stats.clicks' },
    { op: 'append', field: 'log', value: 'renamed' },
  ], { price: 5 });
  assert.deepEqual(result.source, { stats: { clicks: 30 }, log: ['renamed'] });
});

test('a failing op in the middle throws and leaves the input unchanged', () => {
  const current = { price: 1, tags: ['a'], stats: { clicks: 1 } };
  const snapshot = structuredClone(current);
  assertRejects(
    current,
    [
      { op: 'incr', field: 'price', value: 1 },
      { op: 'append', field: 'tags', value: 'b' },
      { op: 'incr', field: 'tags', value: 1 },
      { op: 'set', field: 'stats.clicks', value: 9 },
    ],
    'illegal_argument',
    /^ops\[2\] \(incr on \[tags\]\): field is mapped as \[keyword\]/,
    { stats: { clicks: 5 } },
  );
  assert.deepEqual(current, snapshot);
});

test('the result never shares objects with the input or the request', () => {
  const current = { list: [{ a: 1 }], nested: { deep: { x: 1 } } };
  const doc = { added: { y: [1] } };
  const value = { z: [2] };
  const result = planUpdate(current, { doc, ops: [{ op: 'set', field: 'v', value }, { op: 'append', field: 'v2', value }] }, testFields);
  (result.source.list as unknown[]).push(2);
  ((result.source.nested as Record<string, Record<string, unknown>>).deep as Record<string, unknown>).x = 2;
  ((result.source.added as Record<string, unknown[]>).y as unknown[]).push(3);
  ((result.source.v as Record<string, unknown[]>).z as unknown[]).push(3);
  assert.deepEqual(current, { list: [{ a: 1 }], nested: { deep: { x: 1 } } });
  assert.deepEqual(doc, { added: { y: [1] } });
  assert.deepEqual(value, { z: [2] });
  assert.deepEqual(result.source.v2, [{ z: [2] }]);
});

test('noop detection: equal results are unchanged whatever the key order', () => {
  const current = { title: 'a', info: { clicks: 1, last: 'x' }, list: [1, 2] };
  assert.equal(plan(current, undefined, { info: { last: 'x', clicks: 1 }, list: [1, 2] }).changed, false);
  assert.equal(plan(current, [{ op: 'set', field: 'title', value: 'a' }]).changed, false);
  assert.equal(plan(current, [{ op: 'incr', field: 'info.clicks', value: 0 }]).changed, false);
  assert.equal(plan(current, []).changed, false);
  const setBack = plan(current, [
    { op: 'set', field: 'title', value: 'b' },
    { op: 'set', field: 'title', value: 'a' },
  ]);
  assert.equal(setBack.changed, false);
  assert.equal(setBack.inplaceOnly, false);
  assert.deepEqual(setBack.inplaceWrites, []);
  assert.equal(plan(current, [{ op: 'set', field: 'list', value: [2, 1] }]).changed, true, 'array order matters');
  assert.equal(plan(current, [{ op: 'set', field: 'title', value: null }]).changed, true, 'null differs from a value');
});

test('inplaceOnly is false for structural changes and non-inplace fields', () => {
  assert.equal(plan({ views: 1 }, [{ op: 'set', field: 'title', value: 'x' }]).inplaceOnly, false);
  const viaObject = plan({ stats: { views: 1 } }, [{ op: 'set', field: 'stats', value: { views: 2 } }]);
  assert.equal(viaObject.inplaceOnly, true, 'replacing an object by an equal-shaped one only changes the leaf');
  const created = plan({}, [{ op: 'incr', field: 'stats.views', value: 1 }]);
  assert.equal(created.inplaceOnly, false, 'creating the parent object changes the document shape');
  assert.deepEqual(created.inplaceWrites, [{ field: 'stats.views', value: 1 }]);
  const removed = plan({ stats: { views: 3 } }, [{ op: 'unset', field: 'stats' }]);
  assert.equal(removed.inplaceOnly, false);
  assert.deepEqual(removed.inplaceWrites, [{ field: 'stats.views', value: null }]);
  const representation = plan({ views: 7 }, [{ op: 'set', field: 'views', value: '7' }]);
  assert.equal(representation.changed, false, 'reads show the column value, which did not change');
  assert.equal(representation.inplaceOnly, false);
  assert.deepEqual(representation.inplaceWrites, []);
  const withOther = plan({ views: 7, title: 'a' }, [
    { op: 'set', field: 'views', value: '7' },
    { op: 'set', field: 'title', value: 'b' },
  ]);
  assert.equal(withOther.changed, true);
  assert.equal(withOther.inplaceOnly, false);
  assert.deepEqual(withOther.source, { views: '7', title: 'b' });
});

test('doc values are checked against the mapping', () => {
  assertRejects({}, undefined, 'mapper_parsing', /failed to parse field \[price\] of type \[long\]/, { price: 'abc' });
  assertRejects({}, undefined, 'mapper_parsing', /\[views\].*single value/, { views: [1, 2] });
  assertRejects({}, undefined, 'mapper_parsing', /\[_id\] is a metadata field/, { _id: 'x' });
  const inplace = plan({ featured: false, title: 'x' }, undefined, { featured: true });
  assert.equal(inplace.inplaceOnly, true);
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'featured', value: 1 }]);
});

test('request shape errors', () => {
  assert.throws(() => planUpdate({}, {}, testFields), { code: 'action_request_validation', message: 'Validation Failed: 1: doc or ops is missing;' });
  assert.throws(() => planUpdate({}, { doc: [] as never }, testFields), { code: 'action_request_validation' });
  assert.throws(() => planUpdate({}, { ops: {} as never }, testFields), { code: 'action_request_validation' });
});

test('the default clock is the system clock', () => {
  const before = Date.now();
  const result = planUpdate({}, { ops: [{ op: 'current_date', field: 'at', value: 'timestamp' }] }, testFields);
  const at = result.source.at as number;
  assert.ok(at >= before && at <= Date.now());
});
