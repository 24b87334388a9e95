/**
 * The replication history checker on hand-made histories: what it accepts (lost indeterminate
 * writes, late ones, interchangeable ones, deletes resetting versions) and what it catches (a
 * lost acknowledged write, a write applied twice, two writes at one seq, a feed entry missing,
 * repeated or invented, a copy differing from another).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAcknowledged, checkFeed, checkFeedAgainstStates, checkObservedStates, possibleStates, type DocState, type FeedEntry, type WriteRecord, type WriteRequest } from './replication-checker.ts';
import { compareCopies, type CopyContents } from './replication-copies.ts';

let clock = 0;
let counter = 0;

function write(request: WriteRequest, outcome: WriteRecord['outcome'], ack?: WriteRecord['ack'], docId = 'a'): WriteRecord {
  clock += 10;
  return { opId: `op${++counter}`, docId, shard: 0, request, invokedAt: clock, completedAt: clock + 5, outcome, answer: outcome, ...(ack ? { ack } : {}) };
}

const index = (op: string): WriteRequest => ({ kind: 'index', source: { op, counter: 0 } });
const incr: WriteRequest = { kind: 'update', incr: { field: 'counter', by: 1 } };
const remove: WriteRequest = { kind: 'delete' };
const ack = (result: 'created' | 'updated' | 'deleted', seq: number, version: number) => ({ result, seq, version, primaryTerm: 1 });
const doc = (version: number, op: string, count = 0): DocState => ({ version, source: { op, counter: count } });

test('an acknowledged write must be reflected; an indeterminate one may or may not be', () => {
  const history = [write(index('x'), 'ok', ack('created', 1, 1)), write(incr, 'indeterminate'), write(incr, 'ok', ack('updated', 3, 3))];
  // The acknowledged incr says version 3: the indeterminate one happened before it.
  assert.deepEqual(checkObservedStates(history, new Map([['a', doc(3, 'x', 2)]]), 'final'), []);
  assert.equal(checkObservedStates(history, new Map([['a', doc(2, 'x', 1)]]), 'final').length, 1, 'the last acknowledged write lost');
  assert.equal(checkObservedStates(history, new Map([['a', null]]), 'final').length, 1);
  const lateOrNot = [write(index('y'), 'ok', ack('created', 1, 1)), write(incr, 'indeterminate')];
  for (const state of [doc(1, 'y'), doc(2, 'y', 1)]) assert.deepEqual(checkObservedStates(lateOrNot, new Map([['a', state]]), 'final'), []);
  assert.equal(checkObservedStates(lateOrNot, new Map([['a', doc(3, 'y', 2)]]), 'final').length, 1, 'applied twice');
});

test('an acknowledged answer no history explains is a violation', () => {
  const history = [write(index('x'), 'ok', ack('created', 1, 1)), write(incr, 'ok', ack('updated', 2, 5))];
  const possible = possibleStates(history);
  assert.ok('violation' in possible && /follows from no possible state/.test(possible.violation), JSON.stringify(possible));
});

test('an indeterminate write may land after later acknowledged writes, but not before one its version rules out', () => {
  const created = write(index('x'), 'ok', ack('created', 1, 1));
  const lost = write(remove, 'indeterminate');
  const rewritten = write(index('z'), 'ok', ack('updated', 3, 2));
  assert.deepEqual(checkObservedStates([created, lost, rewritten], new Map([['a', null]]), 'final'), [], 'the delete may have come last');
  const possible = possibleStates([created, lost, rewritten]);
  assert.ok('states' in possible);
  assert.deepEqual(possible.states.sort((left, right) => (left === null ? 1 : right === null ? -1 : 0)), [doc(2, 'z'), null], 'not before the rewrite: it answered updated v2');
});

test('many interchangeable indeterminate writes stay tractable', () => {
  const history = [write(index('x'), 'ok', ack('created', 1, 1))];
  for (let count = 0; count < 40; count++) history.push(write(count % 2 === 0 ? incr : remove, 'indeterminate'));
  history.push(write(index('y'), 'ok', ack('updated', 2, 2)));
  for (let count = 0; count < 6; count++) history.push(write({ kind: 'update', doc: { op: `u${count}` } }, 'indeterminate'));
  const possible = possibleStates(history);
  assert.ok('states' in possible, JSON.stringify(possible));
});

test('acknowledged history: one seq twice, versions shrinking without a delete, seq order against real time', () => {
  const first = write(index('x'), 'ok', ack('created', 1, 1));
  const clash = write(index('y'), 'ok', ack('updated', 1, 2), 'b');
  assert.match(checkAcknowledged([first, clash]).join('\n'), /acknowledged twice/);
  const shrinking = [write(index('x'), 'ok', ack('created', 1, 3)), write(index('y'), 'ok', ack('updated', 2, 2))];
  assert.match(checkAcknowledged(shrinking).join('\n'), /version went from 3/);
  const early = write(index('x'), 'ok', ack('created', 5, 1));
  const late = write(index('y'), 'ok', ack('updated', 2, 2));
  assert.match(checkAcknowledged([early, late]).join('\n'), /completed before/);
  const recreated = [write(index('x'), 'ok', ack('created', 1, 1)), write(remove, 'ok', ack('deleted', 2, 2)), write(index('y'), 'ok', ack('created', 3, 1))];
  assert.deepEqual(checkAcknowledged(recreated), []);
});

test('the feed holds each acknowledged write once, and nothing no write explains', () => {
  const history = [write(index('x'), 'ok', ack('created', 1, 1)), write(incr, 'ok', ack('updated', 2, 2)), write(remove, 'indeterminate'), write(remove, 'ok', ack('deleted', 4, 3))];
  const entries: FeedEntry[] = [
    { id: 'a', shard: 0, op: 'index', version: 1, seq: 1 },
    { id: 'a', shard: 0, op: 'update', version: 2, seq: 2 },
    { id: 'a', shard: 0, op: 'delete', version: 3, seq: 4 },
  ];
  assert.deepEqual(checkFeed(history, entries), []);
  assert.deepEqual(checkFeedAgainstStates(entries, new Map([['a', null]])), []);
  assert.match(checkFeed(history, entries.slice(1)).join('\n'), /acknowledged op\d+ .* is missing/);
  assert.match(checkFeed(history, [...entries, entries[2]!]).join('\n'), /read twice/);
  assert.match(checkFeed(history, [...entries, { id: 'a', shard: 0, op: 'index', version: 1, seq: 5 }]).join('\n'), /match no write/);
  assert.match(checkFeed(history, [entries[0]!, { ...entries[1]!, version: 3 }, entries[2]!]).join('\n'), /holds/);
  assert.match(checkFeedAgainstStates(entries, new Map([['a', doc(2, 'x', 1)]])).join('\n'), /ends absent/);
});

test('copies of a shard must agree on documents and on the record at every seq', () => {
  const history = [write(index('x'), 'ok', ack('created', 1, 1))];
  const copy = (node: string, source: Record<string, unknown>): CopyContents => ({
    node,
    shard: 0,
    documents: new Map([['a', { version: 1, source }]]),
    liveCount: 1,
    records: new Map([[1, { type: 'index', id: 'a', version: 1, primaryTerm: 1, body: JSON.stringify(source) }]]),
    firstSeq: 1,
  });
  assert.deepEqual(compareCopies([copy('n1', { counter: 0, op: 'x' }), copy('n2', { counter: 0, op: 'x' })], history), []);
  const violations = compareCopies([copy('n1', { counter: 0, op: 'x' }), copy('n2', { counter: 0, op: 'other' })], history).join('\n');
  assert.match(violations, /a is/);
  assert.match(violations, /seq 1 holds/);
  assert.match(violations, /on n2: acknowledged .* is logged as/);
});
