import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySourceFilter, parseSourceFilter } from './source-filter.ts';

const DOC = {
  title: 'Dune',
  author: { name: 'Herbert', born: 1920, tags: ['sf'] },
  stats: { views: 10, likes: 2 },
  chapters: [{ name: 'one', pages: 10 }, { name: 'two', pages: 12 }],
};

function filter(source: unknown, includes?: string[], excludes?: string[]): unknown {
  return applySourceFilter(DOC, parseSourceFilter({ source, includes, excludes }));
}

test('true, absent and false', () => {
  assert.deepEqual(filter(undefined), DOC);
  assert.deepEqual(filter(true), DOC);
  assert.equal(filter(false), undefined);
  assert.equal(filter('false'), undefined);
});

test('includes: plain paths, objects, wildcards, arrays of objects', () => {
  assert.deepEqual(filter('title'), { title: 'Dune' });
  assert.deepEqual(filter(['author']), { author: DOC.author });
  assert.deepEqual(filter('author.name,stats.views'), { author: { name: 'Herbert' }, stats: { views: 10 } });
  assert.deepEqual(filter(['stats.*']), { stats: DOC.stats });
  assert.deepEqual(filter(['*.name']), { author: { name: 'Herbert' }, chapters: [{ name: 'one' }, { name: 'two' }] });
  assert.deepEqual(filter(['nothing']), {});
});

test('excludes, alone and with includes; query parameters override the body', () => {
  assert.deepEqual(filter({ excludes: ['author', 'chapters'] }), { title: 'Dune', stats: DOC.stats });
  assert.deepEqual(filter({ includes: ['author', 'stats'], excludes: ['*.born', 'stats.likes'] }), {
    author: { name: 'Herbert', tags: ['sf'] },
    stats: { views: 10 },
  });
  assert.deepEqual(filter({ include: 'title' }), { title: 'Dune' });
  assert.deepEqual(filter(undefined, ['title'], ['title']), {});
  assert.deepEqual(filter(['author'], ['title']), { title: 'Dune' });
});

test('malformed _source values are parsing errors', () => {
  assert.throws(() => parseSourceFilter({ source: { includes: [1] } }), /_source\.includes/);
  assert.throws(() => parseSourceFilter({ source: { other: [] } }), /unknown key \[other\]/);
  assert.throws(() => parseSourceFilter({ source: 12 }), /must be a string/);
});
