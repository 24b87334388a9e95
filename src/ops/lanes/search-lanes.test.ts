import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LaneError } from './lane-error.ts';
import { SearchLanes, type LaneStats } from './search-lanes.ts';
import { SlowLog } from './slow-log.ts';

interface Deferred {
  promise: Promise<{ took: number; timed_out: boolean }>;
  finish(took?: number, timedOut?: boolean): void;
  fail(error: Error): void;
}

function deferred(): Deferred {
  let finish!: Deferred['finish'];
  let fail!: Deferred['fail'];
  const promise = new Promise<{ took: number; timed_out: boolean }>((resolve, reject) => {
    finish = (took = 1, timedOut = false) => resolve({ took, timed_out: timedOut });
    fail = reject;
  });
  return { promise, finish, fail };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function lanes(values: Record<string, unknown>, threshold = -1, lines: string[] = []): SearchLanes {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const slowLog = new SlowLog(() => threshold, pino({ level: 'warn' }, stream).child({ component: 'slowlog' }));
  return new SearchLanes({ 'search.lanes.default.max_concurrent': 4, 'search.lanes.default.max_queue': 10, ...values }, slowLog);
}

function addsUp(stats: LaneStats): void {
  assert.equal(stats.submitted, stats.rejected + stats.completed + stats.failed + stats.active + stats.queued);
}

test('a lane runs max_concurrent searches, queues max_queue more and refuses the rest', async () => {
  const searchLanes = lanes({ 'search.lanes.tiny.max_concurrent': 1, 'search.lanes.tiny.max_queue': 1 });
  const first = deferred();
  const second = deferred();
  const order: string[] = [];
  const running = searchLanes.run({ lane: 'tiny', target: 'c', body: {} }, async () => {
    order.push('first');
    return first.promise;
  });
  const waiting = searchLanes.run({ lane: 'tiny', target: 'c', body: {} }, async () => {
    order.push('second');
    return second.promise;
  });
  await assert.rejects(searchLanes.run({ lane: 'tiny', target: 'c', body: {} }, async () => ({ took: 0, timed_out: false })), (error: unknown) => {
    assert.ok(error instanceof LaneError);
    assert.equal(error.code, 'lane_full');
    assert.match(error.message, /search lane \[tiny\] is full: 1 searches running \(max_concurrent 1\) and 1 waiting \(max_queue 1\)/);
    return true;
  });
  await turn();
  assert.deepEqual(order, ['first']);
  let stats = searchLanes.stats().tiny;
  assert.deepEqual([stats.active, stats.queued, stats.rejected, stats.submitted], [1, 1, 1, 3]);
  addsUp(stats);
  first.finish(5, true);
  await running;
  await turn();
  assert.deepEqual(order, ['first', 'second']);
  second.fail(new Error('boom'));
  await assert.rejects(waiting, /boom/);
  stats = searchLanes.stats().tiny;
  assert.deepEqual([stats.active, stats.queued, stats.completed, stats.failed, stats.timed_out], [0, 0, 1, 1, 1]);
  addsUp(stats);
});

test('unknown lanes are refused; the default lane needs no settings', async () => {
  const searchLanes = lanes({});
  await assert.rejects(searchLanes.run({ lane: 'nope', target: 'c', body: {} }, async () => ({ took: 0, timed_out: false })), (error: unknown) => {
    assert.ok(error instanceof LaneError);
    assert.equal(error.code, 'unknown_lane');
    assert.match(error.message, /unknown search lane \[nope\]; defined lanes: \[default\]/);
    return true;
  });
  await searchLanes.run({ lane: undefined, target: 'c', body: {} }, async () => ({ took: 0, timed_out: false }));
  assert.equal(searchLanes.stats().default.completed, 1);
});

test('budget changes start waiting searches at once and never drop queued ones', async () => {
  const searchLanes = lanes({ 'search.lanes.tiny.max_concurrent': 1, 'search.lanes.tiny.max_queue': 5 });
  const gates = [deferred(), deferred(), deferred()];
  const started: number[] = [];
  const runs = gates.map((gate, index) =>
    searchLanes.run({ lane: 'tiny', target: 'c', body: {} }, async () => {
      started.push(index);
      return gate.promise;
    }),
  );
  await turn();
  assert.deepEqual(started, [0]);
  const values = { 'search.lanes.default.max_concurrent': 4, 'search.lanes.default.max_queue': 10, 'search.lanes.tiny.max_concurrent': 3, 'search.lanes.tiny.max_queue': 0 };
  searchLanes.onSettingsChange({ values: values as never, previous: values as never, changed: ['search.lanes.tiny.max_concurrent'] });
  await turn();
  assert.deepEqual(started, [0, 1, 2]);
  // The lane disappears from the settings: running searches finish, new ones are refused.
  const withoutTiny = { 'search.lanes.default.max_concurrent': 4, 'search.lanes.default.max_queue': 10 };
  searchLanes.onSettingsChange({ values: withoutTiny as never, previous: values as never, changed: ['search.lanes.tiny.max_concurrent'] });
  assert.ok(searchLanes.stats().tiny);
  await assert.rejects(searchLanes.run({ lane: 'tiny', target: 'c', body: {} }, async () => ({ took: 0, timed_out: false })), /unknown search lane/);
  for (const gate of gates) gate.finish();
  await Promise.all(runs);
  assert.equal(searchLanes.stats().tiny, undefined);
});

test('searches at or over the threshold are logged under slowlog and counted', async () => {
  const lines: string[] = [];
  const searchLanes = lanes({}, 10, lines);
  await searchLanes.run({ lane: undefined, target: 'books', body: { query: { match: { title: 'x' } } } }, async () => ({ took: 12, timed_out: false }));
  await searchLanes.run({ lane: undefined, target: 'books', body: {} }, async () => ({ took: 3, timed_out: false }));
  await turn();
  assert.equal(searchLanes.stats().default.slow, 1);
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]);
  assert.equal(line.component, 'slowlog');
  assert.equal(line.collection, 'books');
  assert.equal(line.took, 12);
  assert.equal(line.source, '{"query":{"match":{"title":"x"}}}');
});
