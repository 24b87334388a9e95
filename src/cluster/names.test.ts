import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidNameReason, matchesWildcard, resolveTarget } from './names.ts';

test('collection names follow Elasticsearch index name rules', () => {
  for (const valid of ['books', 'logs-2024.01', 'a_b', 'é']) assert.equal(invalidNameReason(valid), null, valid);
  assert.match(invalidNameReason('Books') ?? '', /lowercase/);
  assert.match(invalidNameReason('_x') ?? '', /must not start/);
  assert.match(invalidNameReason('-x') ?? '', /must not start/);
  assert.match(invalidNameReason('+x') ?? '', /must not start/);
  assert.match(invalidNameReason('.') ?? '', /"\."/);
  assert.match(invalidNameReason('..') ?? '', /"\."/);
  assert.match(invalidNameReason('') ?? '', /empty/);
  assert.match(invalidNameReason('x'.repeat(256)) ?? '', /too long/);
  for (const bad of ['a b', 'a,b', 'a#b', 'a:b', 'a*', 'a?b', 'a/b', 'a\\b', 'a"b', 'a<b', 'a>b', 'a|b']) {
    assert.match(invalidNameReason(bad) ?? '', /must not contain/, bad);
  }
});

test('targets resolve comma lists, wildcards, _all and exclusions', () => {
  const existing = ['books', 'logs-1', 'logs-2', 'users'];
  assert.deepEqual(resolveTarget('books', existing), { names: ['books'], missing: [] });
  assert.deepEqual(resolveTarget('logs-*,books', existing), { names: ['logs-1', 'logs-2', 'books'], missing: [] });
  assert.deepEqual(resolveTarget('_all', existing).names, existing);
  assert.deepEqual(resolveTarget('*,-logs-*', existing).names, ['books', 'users']);
  assert.deepEqual(resolveTarget('nope*', existing), { names: [], missing: [] });
  assert.deepEqual(resolveTarget('books,nope', existing), { names: ['books'], missing: ['nope'] });
});

test('target wildcards are matched in linear time (a backtracking regex never finished on a long name)', () => {
  const long = 'a'.repeat(255);
  const started = performance.now();
  assert.deepEqual(resolveTarget('*a*a*a*a*a*a*a*b', [long, 'xaaaaaaab']), { names: ['xaaaaaaab'], missing: [] });
  assert.deepEqual(resolveTarget('*,-*a*a*a*a*a*a*a*b', [long, 'xaaaaaaab']), { names: [long], missing: [] });
  assert.equal(matchesWildcard('l?gs-*', 'logs-2024'), true);
  assert.ok(performance.now() - started < 1000);
});

test('targets match alias names too: concretely and by pattern, while _all and * select collections only', () => {
  const existing = ['books', 'logs-1'];
  const aliases = ['library', 'logs'];
  assert.deepEqual(resolveTarget('library', existing, aliases), { names: ['library'], missing: [] });
  assert.deepEqual(resolveTarget('lib*,logs-1', existing, aliases).names, ['library', 'logs-1']);
  assert.deepEqual(resolveTarget('logs*', existing, aliases).names, ['logs-1', 'logs']);
  assert.deepEqual(resolveTarget('_all', existing, aliases).names, existing);
  assert.deepEqual(resolveTarget('*', existing, aliases).names, existing);
  assert.deepEqual(resolveTarget('logs*,-logs', existing, aliases).names, ['logs-1']);
  assert.deepEqual(resolveTarget('library,nope', existing).missing, ['library', 'nope']);
});
