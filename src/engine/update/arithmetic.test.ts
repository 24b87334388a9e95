import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apply, assertRejects, plan } from './fixtures.test.ts';

test('incr: adds, decrements, starts missing fields at 0, walks dotted paths', () => {
  assert.deepEqual(apply({ price: 5 }, { op: 'incr', field: 'price', value: 2 }), { price: 7 });
  assert.deepEqual(apply({ price: 5 }, { op: 'incr', field: 'price', value: -7 }), { price: -2 });
  assert.deepEqual(apply({}, { op: 'incr', field: 'price', value: 3 }), { price: 3 });
  assert.deepEqual(apply({ price: null }, { op: 'incr', field: 'price', value: 3 }), { price: 3 });
  assert.deepEqual(apply({}, { op: 'incr', field: 'stats.clicks', value: 1 }), { stats: { clicks: 1 } });
  assert.deepEqual(apply({ score: 1.5 }, { op: 'incr', field: 'score', value: 0.25 }), { score: 1.75 });
  assert.deepEqual(apply({ price: '5' }, { op: 'incr', field: 'price', value: 1 }), { price: 6 }, 'mapped numeric strings read as numbers');
  assert.deepEqual(apply({ loose: 1.5 }, { op: 'incr', field: 'loose', value: 1 }), { loose: 2.5 });
});

test('incr: wrong types', () => {
  assertRejects({ stats: { clicks: 'abc' } }, [{ op: 'incr', field: 'stats.clicks', value: 1 }], 'illegal_argument', /^ops\[0\] \(incr on \[stats.clicks\]\): field value \["abc"\] is not numeric$/);
  assertRejects({ loose: '5' }, [{ op: 'incr', field: 'loose', value: 1 }], 'illegal_argument', /field value \["5"\] is not numeric/);
  assertRejects({ loose: [1] }, [{ op: 'incr', field: 'loose', value: 1 }], 'illegal_argument', /field value \[\[1\]\] is not numeric/);
  assertRejects({ price: 1 }, [{ op: 'incr', field: 'price', value: '1' }], 'illegal_argument', /value \["1"\] is not numeric/);
  assertRejects({ price: 1 }, [{ op: 'incr', field: 'price' }], 'illegal_argument', /\[value\] is required/);
  assertRejects({ price: 1 }, [{ op: 'incr', field: 'price', value: 1.5 }], 'illegal_argument', /value \[1.5\] is not an integer, the field is mapped as \[long\]/);
  assertRejects({}, [{ op: 'incr', field: 'title', value: 1 }], 'illegal_argument', /mapped as \[text\], incr needs a numeric field/);
  assertRejects({}, [{ op: 'incr', field: 'published', value: 1 }], 'illegal_argument', /mapped as \[date\]/);
  assertRejects({ a: 'x' }, [{ op: 'incr', field: 'a.b', value: 1 }], 'illegal_argument', /\[a\] is not an object/);
});

test('incr on inplace fields writes the column only', () => {
  const result = plan({ title: 'x', views: 10, stats: { views: 1, clicks: 2 } }, [
    { op: 'incr', field: 'views', value: 5 },
    { op: 'incr', field: 'stats.views', value: 1 },
  ]);
  assert.deepEqual(result.source, { title: 'x', views: 15, stats: { views: 2, clicks: 2 } });
  assert.equal(result.inplaceOnly, true);
  assert.deepEqual(result.inplaceWrites, [
    { field: 'views', value: 15 },
    { field: 'stats.views', value: 2 },
  ]);
  const mixed = plan({ views: 1, price: 1 }, [
    { op: 'incr', field: 'views', value: 1 },
    { op: 'incr', field: 'price', value: 1 },
  ]);
  assert.equal(mixed.inplaceOnly, false);
  assert.deepEqual(mixed.inplaceWrites, [{ field: 'views', value: 2 }]);
});

test('overflow', () => {
  assertRejects({ count: 2_147_483_647 }, [{ op: 'incr', field: 'count', value: 1 }], 'illegal_argument', /^ops\[0\] \(incr on \[count\]\): overflow: result \[2147483648\] is outside the range of \[integer\]/);
  assertRejects({ count: -2_147_483_648 }, [{ op: 'incr', field: 'count', value: -1 }], 'illegal_argument', /overflow/);
  assert.deepEqual(apply({ count: 2_147_483_646 }, { op: 'incr', field: 'count', value: 1 }), { count: 2_147_483_647 });
  assertRejects({ price: Number.MAX_SAFE_INTEGER }, [{ op: 'incr', field: 'price', value: 1 }], 'illegal_argument', /overflow: .*\[long\]/);
  assertRejects({ price: 2 ** 40 }, [{ op: 'mul', field: 'price', value: 2 ** 20 }], 'illegal_argument', /overflow/);
  assertRejects({ views: 9.1e15 }, [{ op: 'incr', field: 'views', value: 1 }], 'illegal_argument', /overflow/);
  assert.deepEqual(apply({ price: Number.MAX_SAFE_INTEGER - 1 }, { op: 'incr', field: 'price', value: 1 }), { price: Number.MAX_SAFE_INTEGER });
  assertRejects({ loose: Number.MAX_SAFE_INTEGER }, [{ op: 'incr', field: 'loose', value: 2 }], 'illegal_argument', /lose exactness/);
  assertRejects({ ratio: 3e38 }, [{ op: 'mul', field: 'ratio', value: 10 }], 'illegal_argument', /range of \[float\]/);
  assertRejects({ score: 1e308 }, [{ op: 'mul', field: 'score', value: 10 }], 'illegal_argument', /not a finite number/);
  assert.deepEqual(apply({ loose: 1e300 }, { op: 'mul', field: 'loose', value: 10 }), { loose: 1e301 }, 'doubles are not exact anyway');
});

test('mul: multiplies, missing becomes 0', () => {
  assert.deepEqual(apply({ price: 4 }, { op: 'mul', field: 'price', value: 3 }), { price: 12 });
  assert.deepEqual(apply({}, { op: 'mul', field: 'price', value: 3 }), { price: 0 });
  assert.deepEqual(apply({ score: 3 }, { op: 'mul', field: 'score', value: 0.5 }), { score: 1.5 });
  assertRejects({ price: 4 }, [{ op: 'mul', field: 'price', value: 0.5 }], 'illegal_argument', /not an integer/);
  assertRejects({ loose: true }, [{ op: 'mul', field: 'loose', value: 2 }], 'illegal_argument', /field value \[true\] is not numeric/);
  assertRejects({}, [{ op: 'mul', field: 'active', value: 2 }], 'illegal_argument', /mapped as \[boolean\]/);
  assert.deepEqual(plan({ rating: 2 }, [{ op: 'mul', field: 'rating', value: 1.5 }]).inplaceWrites, [{ field: 'rating', value: 3 }]);
});

test('min and max on numbers', () => {
  assert.deepEqual(apply({ price: 5 }, { op: 'min', field: 'price', value: 3 }), { price: 3 });
  assert.equal(plan({ price: 5 }, [{ op: 'min', field: 'price', value: 9 }]).changed, false);
  assert.deepEqual(apply({ price: 5 }, { op: 'max', field: 'price', value: 9 }), { price: 9 });
  assert.equal(plan({ price: 5 }, [{ op: 'max', field: 'price', value: 5 }]).changed, false);
  assert.deepEqual(apply({}, { op: 'min', field: 'price', value: 4 }), { price: 4 });
  assert.deepEqual(apply({}, { op: 'max', field: 'stats.clicks', value: 4 }), { stats: { clicks: 4 } });
  assert.deepEqual(apply({ loose: -1 }, { op: 'max', field: 'loose', value: 0.5 }), { loose: 0.5 });
  assertRejects({ price: 5 }, [{ op: 'min', field: 'price', value: 'x' }], 'illegal_argument', /^ops\[0\] \(min on \[price\]\): value \["x"\] is not numeric$/);
  assertRejects({ loose: 'x' }, [{ op: 'max', field: 'loose', value: 1 }], 'illegal_argument', /field value \["x"\] is not numeric/);
  assertRejects({}, [{ op: 'max', field: 'tags', value: 1 }], 'illegal_argument', /mapped as \[keyword\]/);
  const inplace = plan({ views: 5 }, [{ op: 'max', field: 'views', value: 8 }]);
  assert.equal(inplace.inplaceOnly, true);
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'views', value: 8 }]);
});

test('min and max on dates compare as dates and keep the winner as given', () => {
  const current = { published: '2024-01-01T00:00:00Z' };
  assert.deepEqual(apply(current, { op: 'max', field: 'published', value: '2024-06-01' }), { published: '2024-06-01' });
  assert.equal(plan(current, [{ op: 'max', field: 'published', value: '2023-06-01' }]).changed, false);
  assert.deepEqual(apply(current, { op: 'min', field: 'published', value: 0 }), { published: 0 });
  assert.deepEqual(apply({ published: 5 }, { op: 'max', field: 'published', value: '1970-01-01T00:00:01Z' }), { published: '1970-01-01T00:00:01Z' });
  assert.deepEqual(apply({}, { op: 'min', field: 'stats.last', value: '2024-02-02' }), { stats: { last: '2024-02-02' } });
  assert.deepEqual(apply({ when: '2024-01-01' }, { op: 'min', field: 'when', value: '2023-01-01' }), { when: '2023-01-01' }, 'unmapped date strings');
  assertRejects(current, [{ op: 'max', field: 'published', value: 'tomorrow' }], 'illegal_argument', /value \["tomorrow"\] is not a date/);
  assertRejects(current, [{ op: 'max', field: 'published', value: true }], 'illegal_argument', /is not a date/);
  assertRejects({ when: 'long ago' }, [{ op: 'min', field: 'when', value: '2023-01-01' }], 'illegal_argument', /field value \["long ago"\] is not a date/);
  const inplace = plan({ seen: '2024-01-01' }, [{ op: 'max', field: 'seen', value: '2024-01-02' }]);
  assert.deepEqual(inplace.inplaceWrites, [{ field: 'seen', value: Date.UTC(2024, 0, 2) }]);
});
