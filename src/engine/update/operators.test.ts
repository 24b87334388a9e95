import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apply, assertRejects, NOW, plan } from './fixtures.test.ts';
import { UPDATE_OPERATORS } from './operators.ts';

const NOW_ISO = '2024-05-06T07:08:09.010Z';

test('set: creates, replaces, walks dotted paths and checks the mapped type', () => {
  assert.deepEqual(apply({}, { op: 'set', field: 'title', value: 'x' }), { title: 'x' });
  assert.deepEqual(apply({ price: 1 }, { op: 'set', field: 'price', value: 2 }), { price: 2 });
  assert.deepEqual(apply({}, { op: 'set', field: 'stats.clicks', value: 3 }), { stats: { clicks: 3 } });
  assert.deepEqual(apply({ stats: { last: 'x' } }, { op: 'set', field: 'stats.clicks', value: 3 }), {
    stats: { last: 'x', clicks: 3 },
  });
  assert.deepEqual(apply({}, { op: 'set', field: 'free.form', value: { any: [1, 'a'] } }), { free: { form: { any: [1, 'a'] } } });
  assert.deepEqual(apply({ price: 1 }, { op: 'set', field: 'price', value: '12' }), { price: '12' }, 'numeric strings are accepted, kept as sent');
  assert.deepEqual(apply({ price: 1 }, { op: 'set', field: 'price', value: null }), { price: null });
  assertRejects({}, [{ op: 'set', field: 'price', value: 'abc' }], 'illegal_argument', /^ops\[0\] \(set on \[price\]\): failed to parse field \[price\] of type \[long\]: value \["abc"\]/);
  assertRejects({}, [{ op: 'set', field: 'stats', value: 5 }], 'illegal_argument', /ops\[0\] \(set on \[stats\]\).*concrete value/);
  assertRejects({}, [{ op: 'set', field: 'stats', value: { views: 'many' } }], 'illegal_argument', /\[stats.views\] of type \[long\]/);
  assertRejects({ a: 5 }, [{ op: 'set', field: 'a.b', value: 1 }], 'illegal_argument', /cannot create \[a.b\]: \[a\] is not an object/);
  assertRejects({}, [{ op: 'set', field: 'title.keyword', value: 'x' }], 'illegal_argument', /\[title\] must be of type object/);
  assertRejects({}, [{ op: 'set', field: 'views', value: [1, 2] }], 'illegal_argument', /single value/);
  assertRejects({}, [{ op: 'set', field: 'title' }], 'illegal_argument', /ops\[0\] \(set on \[title\]\): \[value\] is required/);
});

test('set on an inplace field is an inplace write', () => {
  const result = plan({ views: 1, title: 't' }, [{ op: 'set', field: 'views', value: '7' }]);
  assert.equal(result.inplaceOnly, true);
  assert.deepEqual(result.inplaceWrites, [{ field: 'views', value: 7 }]);
});

test('literal dotted keys are honoured when present', () => {
  assert.deepEqual(apply({ 'stats.clicks': 1 }, { op: 'set', field: 'stats.clicks', value: 2 }), { 'stats.clicks': 2 });
  assert.deepEqual(apply({ a: { 'b.c': 1 } }, { op: 'incr', field: 'a.b.c', value: 1 }), { a: { 'b.c': 2 } });
  assert.deepEqual(apply({ 'a.b': { c: 1 } }, { op: 'unset', field: 'a.b.c' }), { 'a.b': {} });
});

test('unset: removes, missing is a no-op', () => {
  assert.deepEqual(apply({ title: 'x', price: 1 }, { op: 'unset', field: 'title' }), { price: 1 });
  assert.deepEqual(apply({ stats: { clicks: 1, last: 2 } }, { op: 'unset', field: 'stats.clicks' }), { stats: { last: 2 } });
  const noop = plan({ title: 'x' }, [{ op: 'unset', field: 'nothing.here' }]);
  assert.equal(noop.changed, false);
  const inplace = plan({ views: 4 }, [{ op: 'unset', field: 'views' }]);
  assert.equal(inplace.inplaceOnly, true);
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'views', value: null }]);
});

test('toggle: missing becomes true, booleans flip, others are rejected', () => {
  assert.deepEqual(apply({}, { op: 'toggle', field: 'active' }), { active: true });
  assert.deepEqual(apply({ active: true }, { op: 'toggle', field: 'active' }), { active: false });
  assert.deepEqual(apply({ active: 'false' }, { op: 'toggle', field: 'active' }), { active: true });
  assert.deepEqual(apply({ a: { b: false } }, { op: 'toggle', field: 'a.b' }), { a: { b: true } });
  assert.deepEqual(apply({ a: null }, { op: 'toggle', field: 'a' }), { a: true });
  assertRejects({ flag: 1 }, [{ op: 'toggle', field: 'flag' }], 'illegal_argument', /^ops\[0\] \(toggle on \[flag\]\): field value \[1\] is not a boolean$/);
  assertRejects({}, [{ op: 'toggle', field: 'price' }], 'illegal_argument', /mapped as \[long\], toggle needs a boolean/);
  const inplace = plan({ featured: false }, [{ op: 'toggle', field: 'featured' }]);
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'featured', value: 1 }]);
  assert.equal(inplace.inplaceOnly, true);
});

test('append: missing becomes [value], scalars become arrays, type checked', () => {
  assert.deepEqual(apply({}, { op: 'append', field: 'tags', value: 'a' }), { tags: ['a'] });
  assert.deepEqual(apply({ tags: 'a' }, { op: 'append', field: 'tags', value: 'b' }), { tags: ['a', 'b'] });
  assert.deepEqual(apply({ tags: ['a'] }, { op: 'append', field: 'tags', value: 'a' }), { tags: ['a', 'a'] });
  assert.deepEqual(apply({ x: { y: [1] } }, { op: 'append', field: 'x.y', value: { z: 1 } }), { x: { y: [1, { z: 1 }] } });
  assertRejects({ price: [1] }, [{ op: 'append', field: 'price', value: 'abc' }], 'illegal_argument', /ops\[0\] \(append on \[price\]\).*\[price\] of type \[long\]/);
  assertRejects({ views: 1 }, [{ op: 'append', field: 'views', value: 2 }], 'illegal_argument', /single value/);
  const inplace = plan({}, [{ op: 'append', field: 'views', value: 3 }]);
  assert.deepEqual(inplace.source, { views: [3] });
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'views', value: 3 }]);
});

test('add_to_set: pushes unless a deep-equal element exists', () => {
  assert.deepEqual(apply({}, { op: 'add_to_set', field: 'tags', value: 'a' }), { tags: ['a'] });
  assert.deepEqual(apply({ tags: ['a'] }, { op: 'add_to_set', field: 'tags', value: 'b' }), { tags: ['a', 'b'] });
  assert.equal(plan({ tags: ['a', 'b'] }, [{ op: 'add_to_set', field: 'tags', value: 'a' }]).changed, false);
  assert.equal(plan({ tags: 'a' }, [{ op: 'add_to_set', field: 'tags', value: 'a' }]).changed, false);
  const objects = { list: [{ a: 1, b: { c: 2 } }] };
  assert.equal(plan(objects, [{ op: 'add_to_set', field: 'list', value: { b: { c: 2 }, a: 1 } }]).changed, false, 'key order does not matter');
  assert.deepEqual(apply(objects, { op: 'add_to_set', field: 'list', value: { a: 1 } }), { list: [{ a: 1, b: { c: 2 } }, { a: 1 }]});
  assertRejects({}, [{ op: 'add_to_set', field: 'published', value: 'soon' }], 'illegal_argument', /\[published\] of type \[date\]/);
});

test('rename: moves values, overwrites the target, missing is a no-op', () => {
  assert.deepEqual(apply({ a: 1, b: 2 }, { op: 'rename', field: 'a', value: 'b' }), { b: 1 });
  assert.deepEqual(apply({ a: { x: 1 } }, { op: 'rename', field: 'a.x', value: 'c.d' }), { a: {}, c: { d: 1 } });
  assert.deepEqual(apply({ stats: { clicks: 3 } }, { op: 'rename', field: 'stats', value: 'old_stats' }), { old_stats: { clicks: 3 } });
  assert.deepEqual(apply({ price: 5 }, { op: 'rename', field: 'price', value: 'stats.clicks' }), { stats: { clicks: 5 } });
  assert.equal(plan({ a: 1 }, [{ op: 'rename', field: 'missing', value: 'b' }]).changed, false);
});

test('rename: mapping rules', () => {
  assertRejects({ price: 5 }, [{ op: 'rename', field: 'price', value: 'title' }], 'illegal_argument', /^ops\[0\] \(rename on \[price\]\): target \[title\] is mapped as \[text\] but \[price\] is \[long\]$/);
  assertRejects({ other: 'abc' }, [{ op: 'rename', field: 'other', value: 'price' }], 'illegal_argument', /\[price\] of type \[long\]/);
  assertRejects({ views: 5 }, [{ op: 'rename', field: 'views', value: 'price' }], 'illegal_argument', /\[views\] is an inplace field and \[price\] is not/);
  assertRejects({ views: 5 }, [{ op: 'rename', field: 'views', value: 'loose' }], 'illegal_argument', /inplace/);
  assertRejects({ stats: { views: 1 } }, [{ op: 'rename', field: 'stats', value: 'moved' }], 'illegal_argument', /\[stats.views\] is an inplace field and \[moved.views\] is not/);
  assert.deepEqual(apply({ views: 5 }, { op: 'rename', field: 'views', value: 'stats.views' }), { stats: { views: 5 } });
  assert.deepEqual(apply({ other: 4 }, { op: 'rename', field: 'other', value: 'views' }), { views: 4 });
  assertRejects({ a: 1 }, [{ op: 'rename', field: 'a', value: 'a.b' }], 'illegal_argument', /paths overlap/);
  assertRejects({ a: 1 }, [{ op: 'rename', field: 'a', value: 'a' }], 'illegal_argument', /paths overlap/);
  assertRejects({ a: 1 }, [{ op: 'rename', field: 'a', value: 3 }], 'illegal_argument', /dotted path/);
  assertRejects({ a: 1 }, [{ op: 'rename', field: 'a', value: '_id' }], 'illegal_argument', /metadata field/);
});

test('current_date: ISO string, timestamp, inplace column and mapping rules', () => {
  assert.deepEqual(apply({}, { op: 'current_date', field: 'published' }), { published: NOW_ISO });
  assert.deepEqual(apply({}, { op: 'current_date', field: 'published', value: 'date' }), { published: NOW_ISO });
  assert.deepEqual(apply({}, { op: 'current_date', field: 'published', value: 'timestamp' }), { published: NOW });
  assert.deepEqual(apply({}, { op: 'current_date', field: 'stats.last' }), { stats: { last: NOW_ISO } });
  assert.deepEqual(apply({}, { op: 'current_date', field: 'anything' }), { anything: NOW_ISO });
  assert.deepEqual(apply({}, { op: 'current_date', field: 'price', value: 'timestamp' }), { price: NOW });
  const inplace = plan({ seen: 0 }, [{ op: 'current_date', field: 'seen' }]);
  assert.deepEqual(inplace.source, { seen: NOW_ISO });
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'seen', value: NOW }]);
  assert.equal(inplace.inplaceOnly, true);
  assertRejects({}, [{ op: 'current_date', field: 'price' }], 'illegal_argument', /^ops\[0\] \(current_date on \[price\]\): field is mapped as \[long\], not \[date\]/);
  assertRejects({}, [{ op: 'current_date', field: 'title', value: 'date' }], 'illegal_argument', /mapped as \[text\]/);
  assertRejects({}, [{ op: 'current_date', field: 'count', value: 'timestamp' }], 'illegal_argument', /out of range for an integer/);
  assertRejects({}, [{ op: 'current_date', field: 'published', value: 'now' }], 'illegal_argument', /"date" or "timestamp"/);
});

test('malformed operations name their position', () => {
  assertRejects({}, [{ op: 'set', field: 'a', value: 1 }, { op: 'explode', field: 'a' }], 'illegal_argument', new RegExp(`^ops\\[1\\]: unknown op \\["explode"\\], expected one of \\[${UPDATE_OPERATORS.join(', ')}\\]$`));
  assert.equal(UPDATE_OPERATORS.length, 11);
  assertRejects({}, [{ op: 'set', field: '', value: 1 }], 'illegal_argument', /^ops\[0\] \(set\): \[field\] must be a dotted field path/);
  assertRejects({}, [{ op: 'set', field: 'a..b', value: 1 }], 'illegal_argument', /dotted field path/);
  assertRejects({}, [{ op: 'set', value: 1 } as never], 'illegal_argument', /\[field\] must be/);
  assertRejects({}, ['set' as never], 'illegal_argument', /^ops\[0\]: an operation must be an object/);
  assertRejects({}, [{ op: 'set', field: 'a', value: 1, extra: true } as never], 'illegal_argument', /unknown key \[extra\]/);
  assertRejects({}, [{ op: 'set', field: '_source', value: 1 }], 'illegal_argument', /metadata field/);
});

test('a reserved segment (__proto__, constructor, prototype) in [field] or a rename target is refused for every op', () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    for (const field of [name, `${name}.polluted`, `stats.${name}`, `a.${name}.b`]) {
      for (const op of UPDATE_OPERATORS) {
        const value = op === 'rename' ? 'elsewhere' : op === 'current_date' ? undefined : 1;
        assertRejects(
          { stats: {} },
          [{ op, field, ...(value === undefined ? {} : { value }) }],
          'illegal_argument',
          new RegExp(`^ops\\[0\\] \\(${op} on \\[${field.replace(/\./g, '\\.')}\\]\\): field \\[${field.replace(/\./g, '\\.')}\\] is not allowed: \\[${name}\\] is a reserved name$`),
        );
      }
      assertRejects({ stats: {} }, [{ op: 'rename', field: 'stats', value: `moved.${field}` }], 'illegal_argument', new RegExp(`\\[${name}\\] is a reserved name`));
    }
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(apply({}, { op: 'set', field: 'toString', value: 1 }), { toString: 1 }, 'other Object.prototype names are ordinary fields');
});
