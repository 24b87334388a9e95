import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyFilterPath } from './filter-path.ts';

const response = {
  took: 3,
  hits: {
    total: { value: 2, relation: 'eq' },
    hits: [
      { _id: '1', _score: 1, _source: { title: 'a', tags: ['x'] } },
      { _id: '2', _score: 0.5, _source: { title: 'b' } },
    ],
  },
};

test('includes exact paths through arrays', () => {
  assert.deepEqual(applyFilterPath(response, 'hits.hits._id'), { hits: { hits: [{ _id: '1' }, { _id: '2' }] } });
  assert.deepEqual(applyFilterPath(response, 'took,hits.total.value'), { took: 3, hits: { total: { value: 2 } } });
});

test('single-level and partial wildcards', () => {
  assert.deepEqual(applyFilterPath(response, 'hits.hits.*.title'), {
    hits: { hits: [{ _source: { title: 'a' } }, { _source: { title: 'b' } }] },
  });
  assert.deepEqual(applyFilterPath(response, 'hits.hits._sc*'), { hits: { hits: [{ _score: 1 }, { _score: 0.5 }] } });
});

test('** matches any depth', () => {
  assert.deepEqual(applyFilterPath(response, '**.title'), {
    hits: { hits: [{ _source: { title: 'a' } }, { _source: { title: 'b' } }] },
  });
});

test('exclusions drop matching paths and keep the rest', () => {
  assert.deepEqual(applyFilterPath({ a: 1, b: { c: 2, d: 3 } }, '-b.c'), { a: 1, b: { d: 3 } });
  assert.deepEqual(applyFilterPath(response, 'hits.hits,-hits.hits._source'), {
    hits: { hits: [{ _id: '1', _score: 1 }, { _id: '2', _score: 0.5 }] },
  });
});

test('nothing matching gives an empty object', () => {
  assert.deepEqual(applyFilterPath(response, 'nope'), {});
});
