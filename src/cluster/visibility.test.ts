import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineVisibilityOf, refreshesOnly, timeValueMs } from './visibility.ts';

test('refresh_interval time values in ms: units, -1 and 0 as given, below a millisecond as one', () => {
  assert.equal(timeValueMs('1s'), 1000);
  assert.equal(timeValueMs('250ms'), 250);
  assert.equal(timeValueMs('2m'), 120_000);
  assert.equal(timeValueMs('1h'), 3_600_000);
  assert.equal(timeValueMs('1d'), 86_400_000);
  assert.equal(timeValueMs('500micros'), 1);
  assert.equal(timeValueMs('-1'), -1);
  assert.equal(timeValueMs('0'), 0);
  assert.ok(Number.isNaN(timeValueMs('soon')));
});

test('a collection refreshes only with visibility refresh; its engine settings follow its settings', () => {
  assert.equal(refreshesOnly({}), false);
  assert.equal(refreshesOnly({ visibility: 'immediate' }), false);
  assert.equal(refreshesOnly({ visibility: 'refresh' }), true);
  assert.deepEqual(engineVisibilityOf({}), { visibility: 'immediate', refreshIntervalMs: undefined });
  assert.deepEqual(engineVisibilityOf({ visibility: 'refresh', refresh_interval: '-1' }), { visibility: 'refresh', refreshIntervalMs: -1 });
  assert.deepEqual(engineVisibilityOf({ visibility: 'refresh', refresh_interval: '30s' }), { visibility: 'refresh', refreshIntervalMs: 30_000 });
});
