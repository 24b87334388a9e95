/**
 * Test fixture: one list of shard-handle calls, run on two handles whose answers must be equal
 * (a `LocalShardHandle` and another implementation on an empty shard with `PARITY_MAPPING`), and
 * one of replication calls between two such handles.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import type { EngineError } from '../engine/errors.ts';
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { ShardHandle } from './shard-handle.ts';

/** The mapping the parity shards are opened with. */
export const PARITY_MAPPING: Mapping = { properties: { title: { type: 'text' }, n: { type: 'long' } } };

/** Whoever manages the copy: the handle itself, or (for a remote copy) the handle on its node. */
export type ShardOwner = Pick<ShardHandle, 'setMapping' | 'updateSettings' | 'close'>;

/**
 * A value with its clock readings (`timestamp`, `lastEpochAt`) blanked, errors as plain data, and
 * properties whose value is undefined left out (no reader of the property can tell them apart,
 * and JSON cannot carry them).
 */
export function comparable(value: unknown): unknown {
  if (value instanceof Error) return { error: value.constructor.name, code: (value as EngineError).code, message: value.message };
  if (Array.isArray(value)) return value.map(comparable);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).filter(([, item]) => item !== undefined).map(([key, item]) => [key, key === 'timestamp' || key === 'lastEpochAt' ? '<clock>' : comparable(item)]);
  return Object.fromEntries(entries);
}

/** Asserts that two runs of `exerciseShardHandle` answered alike, step by step. */
export function assertSameAnswers(actual: Array<[string, unknown]>, expected: Array<[string, unknown]>, label: string): void {
  assert.equal(actual.length, expected.length, `${label}: number of steps`);
  for (const [index, [name, answer]] of actual.entries()) assert.deepEqual(answer, expected[index]![1], `${label}: step [${name}]`);
}

/** Runs the same operations on a handle and returns every answer (or error), comparable. */
export async function exerciseShardHandle(handle: ShardHandle, owner: ShardOwner = handle): Promise<Array<[string, unknown]>> {
  const answers: Array<[string, unknown]> = [];
  const step = async (name: string, run: () => Promise<unknown>): Promise<unknown> => {
    let answer: unknown;
    try {
      answer = await run();
    } catch (error) {
      answer = error;
    }
    answers.push([name, comparable(answer)]);
    return answer;
  };
  type Phase = Awaited<ReturnType<ShardHandle['query']>>;
  await step('write a', () => handle.write({ kind: 'index', id: 'a', source: { title: 'hello world', n: 1 } }));
  await step('write b', () => handle.write({ kind: 'index', id: 'b', source: { title: 'hello there', n: 2 } }));
  await step('update a', () => handle.write({ kind: 'update', id: 'a', doc: { n: 10 }, returnSource: true }));
  await step('create a again', () => handle.write({ kind: 'index', id: 'a', opType: 'create', source: { title: 'x' } }));
  await step('delete missing', () => handle.write({ kind: 'delete', id: 'nope' }));
  await step('writeBatch', () =>
    handle.writeBatch([
      { kind: 'index', id: 'a', opType: 'create', source: { title: 'conflict' } },
      { kind: 'index', id: 'c', source: { title: 'goodbye world', n: 3 } },
      { kind: 'update', id: 'missing', doc: { n: 1 } },
      { kind: 'delete', id: 'b' },
    ]),
  );
  const lines = ['{"title": "from text", "n": 20}', '{"title": ', '[1, 2]', '{"title": "new field", "color": "red"}', '{"__proto__": {"x": 1}}', ' {"title":"spaced" , "n":21 } '];
  const textBatch = (): Parameters<ShardHandle['prepareBatch']>[0] => {
    const texts = new TextEncoder().encode(lines.join(''));
    let start = 0;
    const ops = lines.map((line, position) => {
      const end = start + Buffer.byteLength(line);
      const op = { kind: 'index_text' as const, id: `t${position}`, start, end, ...(position === 5 ? { opType: 'create' as const } : {}) };
      start = end;
      return op;
    });
    return { ops: [...ops, { kind: 'delete', id: 'c' }], texts, maxDepth: 20 };
  };
  const prepared = (await step('prepareBatch', () => handle.prepareBatch(textBatch()))) as Awaited<ReturnType<ShardHandle['prepareBatch']>>;
  await step('writePrepared', () => handle.writePrepared(prepared.batch, [3]));
  await step('writePrepared again (freed)', () => handle.writePrepared(prepared.batch, []));
  await step('get t5 (stored as sent)', () => handle.get('t5'));
  const unwritten = (await step('prepareBatch 2', () => handle.prepareBatch(textBatch()))) as Awaited<ReturnType<ShardHandle['prepareBatch']>>;
  await step('freeContext (prepared batch)', () => handle.freeContext(unwritten.batch));
  await step('writePrepared freed', () => handle.writePrepared(unwritten.batch, []));
  await step('get a', () => handle.get('a'));
  await step('get b (deleted)', () => handle.get('b'));
  await step('multiGet', () => handle.multiGet(['c', 'zz', 'a']));
  await step('exists a', () => handle.exists('a'));
  await step('exists zz', () => handle.exists('zz'));
  const request = { query: { match: { title: 'world' } }, from: 0, size: 10, trackTotalHits: true, aggs: { top: { max: { field: 'n' } } } };
  const phase = (await step('query', () => handle.query(request))) as Phase;
  await step('fetch', () => handle.fetch(phase.context, phase.result.hits));
  await step('fetch again (freed)', () => handle.fetch(phase.context, phase.result.hits));
  const unfetched = (await step('query 2', () => handle.query({ from: 0, size: 5 }))) as Phase;
  await step('freeContext', () => handle.freeContext(unfetched.context));
  await step('fetch freed', () => handle.fetch(unfetched.context, unfetched.result.hits));
  const sortAggs = { n_terms: { terms: { field: 'n' } }, n_stats: { stats: { field: 'n' } }, n_range: { range: { field: 'n', ranges: [{ to: 5 }, { from: 5 }] } } };
  const sorted = (await step('query sorted (no scores)', () => handle.query({ from: 0, size: 10, sort: [{ n: 'desc' }], aggs: sortAggs }))) as Phase;
  await step('fetch sorted', () => handle.fetch(sorted.context, sorted.result.hits));
  await step('queryAndFetch', () => handle.queryAndFetch(request));
  await step('queryAndFetch sorted (no scores)', () => handle.queryAndFetch({ from: 0, size: 10, sort: [{ n: 'desc' }], aggs: sortAggs }));
  await step('queryAndFetch bad search', () => handle.queryAndFetch({ query: { no_such_query: {} }, from: 0, size: 1 }));
  await step('query search_after', () => handle.query({ from: 0, size: 10, sort: [{ n: 'asc' }], searchAfter: [3] }));
  await step('bad search', () => handle.query({ query: { no_such_query: {} }, from: 0, size: 1 }));
  await step('count', () => handle.count({ match: { title: 'hello' } }));
  await step('count (no query)', () => handle.count(undefined));
  await step('bad query', () => handle.count({ no_such_query: {} }));
  await step('readChanges', () => handle.readChanges(0, 100));
  const bounds = (await step('changeBounds', () => handle.changeBounds())) as Awaited<ReturnType<ShardHandle['changeBounds']>>;
  const waiting = handle.waitForChanges(bounds.durableSeq, 10_000);
  await step('write d', () => handle.write({ kind: 'index', id: 'd', source: { title: 'late', n: 4 } }));
  await step('waitForChanges (write)', () => waiting);
  await step('waitForChanges (timeout)', () => handle.waitForChanges(bounds.durableSeq + 1, 30));
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(), 30);
  await step('waitForChanges (abort)', () => handle.waitForChanges(bounds.durableSeq + 1, 60_000, controller.signal));
  assert.ok(Date.now() - started < 5_000, 'an aborted wait resolves at once');
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'no abort listener stays behind');
  await step('waitForChanges (aborted before)', () => handle.waitForChanges(bounds.durableSeq + 1, 60_000, controller.signal));
  await step('epoch', () => handle.epoch());
  await step('stats after epoch', () => handle.stats());
  await step('write e', () => handle.write({ kind: 'index', id: 'e', source: { title: 'second segment', n: 5 } }));
  await step('epoch 2', () => handle.epoch());
  await step('forceMerge', () => handle.forceMerge({ maxSegments: 1 }));
  await step('stats after merge', () => handle.stats());
  await step('write g (WAL past the checkpoint)', () => handle.write({ kind: 'index', id: 'g', source: { title: 'after merge', n: 7 } }));
  await step('verify', () => handle.verify());
  await step('setMapping', () => owner.setMapping({ properties: { ...PARITY_MAPPING.properties, tag: { type: 'keyword' } } }));
  await step('write tagged', () => handle.write({ kind: 'index', id: 'f', source: { title: 'tagged', n: 6, tag: 'red' } }));
  await step('count tagged', () => handle.count({ term: { tag: 'red' } }));
  await step('updateSettings', () => owner.updateSettings({ epochMaxDocs: 1_000 }));
  await exerciseRefresh(handle, owner, step);
  await exerciseReaders(handle, step);
  await step('close', () => owner.close());
  return answers;
}

/** Visibility `refresh`: searches, counts and non-realtime gets read the refreshed view until `refresh`; then back to `immediate`. */
async function exerciseRefresh(handle: ShardHandle, owner: ShardOwner, step: (name: string, run: () => Promise<unknown>) => Promise<unknown>): Promise<void> {
  await step('waitForRefresh (immediate)', () => handle.waitForRefresh(0));
  await step('visibility refresh', () => owner.updateSettings({ visibility: 'refresh', refreshIntervalMs: -1 }));
  await step('write h (not refreshed)', () => handle.write({ kind: 'index', id: 'h', source: { title: 'hidden world', n: 8 } }));
  await step('delete e (not refreshed)', () => handle.write({ kind: 'delete', id: 'e' }));
  const hidden = (await step('count before refresh', () => handle.count(undefined))) as number;
  await step('queryAndFetch before refresh', () => handle.queryAndFetch({ query: { match: { title: 'world' } }, from: 0, size: 10, sort: [{ n: 'asc' }] }));
  await step('get h realtime', () => handle.get('h'));
  assert.equal(await step('get h not realtime', () => handle.get('h', { realtime: false })), null, 'a write is hidden until the refresh');
  assert.notEqual(await step('get e not realtime', () => handle.get('e', { realtime: false })), null, 'a delete too');
  await step('multiGet not realtime', () => handle.multiGet(['h', 'e'], { realtime: false }));
  await step('exists h not realtime', () => handle.exists('h', { realtime: false }));
  await step('waitForRefresh (timeout)', () => handle.waitForRefresh(30));
  const waiting = handle.waitForRefresh(10_000);
  await step('refresh', () => handle.refresh());
  await step('waitForRefresh (refreshed)', () => waiting);
  const shown = (await step('count after refresh', () => handle.count(undefined))) as number;
  assert.equal(shown, hidden, 'one write and one delete became visible together');
  assert.notEqual(await step('get h not realtime after refresh', () => handle.get('h', { realtime: false })), null);
  assert.equal(await step('exists e not realtime after refresh', () => handle.exists('e', { realtime: false })), false);
  await step('visibility immediate', () => owner.updateSettings({ visibility: 'immediate' }));
}

/** Reader contexts: a snapshot that writes after its open do not change, searched, listed and closed. */
async function exerciseReaders(handle: ShardHandle, step: (name: string, run: () => Promise<unknown>) => Promise<unknown>): Promise<void> {
  type Phase = Awaited<ReturnType<ShardHandle['query']>>;
  const withoutClock = async (): Promise<unknown> => (await handle.listReaders()).map(({ createdAt: _createdAt, ...info }) => info);
  await step('openReader', async () => {
    const { createdAt: _createdAt, ...info } = await handle.openReader({ id: 'parity-reader', kind: 'pit', shardIndex: 2, keepAliveMs: 60_000 });
    return info;
  });
  await step('openReader (same id)', () => handle.openReader({ id: 'parity-reader', kind: 'pit', shardIndex: 2, keepAliveMs: 60_000 }));
  await step('readerPosition', () => handle.readerPosition('parity-reader'));
  await step('readerPosition (move)', () => handle.readerPosition('parity-reader', { version: 0, after: [3, 'x'] }));
  await step('readerPosition (moved meanwhile)', () => handle.readerPosition('parity-reader', { version: 0, after: [4] }));
  await step('readerPosition (unknown)', () => handle.readerPosition('no-such-reader'));
  await step('write after the open', () => handle.write({ kind: 'index', id: 'late', source: { title: 'hello world', n: 100 } }));
  await step('update after the open', () => handle.write({ kind: 'index', id: 'a', source: { title: 'changed world', n: 30 } }));
  await step('delete after the open', () => handle.write({ kind: 'delete', id: 'g' }));
  await step('epoch after the open', () => handle.epoch());
  const request = { from: 0, size: 50, sort: [{ n: 'asc' }, '_shard_doc'], trackTotalHits: true };
  const phase = (await step('query on the reader', () => handle.query(request, { id: 'parity-reader', keepAliveMs: 30_000 }))) as Phase;
  const fetched = (await step('fetch from the reader', () => handle.fetch(phase.context, phase.result.hits))) as Array<{ id: string; source?: { title?: string } }>;
  assert.ok(Array.isArray(fetched), `fetch from the reader: ${String(fetched)}`);
  const seen = Object.fromEntries(fetched.map((document) => [document.id, document.source?.title]));
  assert.ok(seen.a === 'hello world' && seen.g === 'after merge' && !('late' in seen), `the reader sees the documents of its open, as they were: ${JSON.stringify(seen)}`);
  await step('queryAndFetch on the reader', () => handle.queryAndFetch({ from: 0, size: 10, sort: ['_shard_doc'] }, { id: 'parity-reader' }));
  await step('queryAndFetch live', () => handle.queryAndFetch({ ...request, sort: [{ n: 'asc' }] }));
  await step('listReaders', withoutClock);
  await step('openReader (scroll)', async () => (await handle.openReader({ id: 'parity-scroll', kind: 'scroll', shardIndex: 0, keepAliveMs: 60_000 })).kind);
  await step('closeReaders (kind)', () => handle.closeReaders({ kind: 'scroll' }));
  await step('closeReaders (ids)', () => handle.closeReaders({ ids: ['parity-reader', 'unknown'] }));
  await step('query on a closed reader', () => handle.query({ from: 0, size: 1 }, { id: 'parity-reader' }));
  await step('listReaders (none)', withoutClock);
}

/**
 * Replication between two handles on empty copies: writes on `primary`, ships its records to
 * `replica`, asserts what must hold whatever the implementation (same documents, change feed with
 * timestamps, history position; a hole refused with nothing written; a resend skipped; terms) and
 * returns every answer, comparable (payloads as base64, hold numbers blanked).
 */
export async function exerciseReplication(primary: ShardHandle, replica: ShardHandle): Promise<Array<[string, unknown]>> {
  const answers: Array<[string, unknown]> = [];
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T | Error> => {
    try {
      const answer = await run();
      answers.push([name, comparable(answer)]);
      return answer;
    } catch (error) {
      answers.push([name, comparable(error)]);
      return error as Error;
    }
  };
  const ids = ['a', 'b', 'c', 'd'];
  await step('writeBatch', () => primary.writeBatch(ids.map((id, n) => ({ kind: 'index', id, source: { title: `copy ${id}`, n } }))));
  await step('update a', () => primary.write({ kind: 'update', id: 'a', doc: { n: 10 } }));
  await step('delete b', () => primary.write({ kind: 'delete', id: 'b' }));
  await step('setPrimaryTerm 3', () => primary.setPrimaryTerm(3));
  const promoted = await step('write under term 3', () => primary.write({ kind: 'index', id: 'c', source: { title: 'term three', n: 3 } }));
  assert.equal((promoted as { primaryTerm: number }).primaryTerm, 3, 'a write after setPrimaryTerm carries the new term');
  const lowered = await step('setPrimaryTerm 2 (lower)', () => primary.setPrimaryTerm(2));
  assert.equal((lowered as EngineError).code, 'illegal_argument');
  const position = (await step('historyPosition', () => primary.historyPosition())) as Awaited<ReturnType<ShardHandle['historyPosition']>>;
  assert.deepEqual(position, { firstSeq: 1, lastSeq: 7, lastTerm: 3 });
  await step('termAt', async () => [await primary.termAt(0), await primary.termAt(1), await primary.termAt(7), await primary.termAt(8)]);
  const records = (await primary.readRecords(0, 100, 1 << 20)).map((record) => ({ ...record }));
  answers.push(['readRecords', records.map((record) => ({ seq: record.seq, payload: Buffer.from(record.payload).toString('base64') }))]);
  await step('readRecords byte budget', async () => (await primary.readRecords(2, 100, 1)).map((record) => record.seq));
  await step('readRecords limit', async () => (await primary.readRecords(2, 2, 1 << 20)).map((record) => record.seq));

  await step('replica historyPosition (empty)', () => replica.historyPosition());
  const gap = await step('applyRecords with a hole', () => replica.applyRecords(records.slice(2)));
  assert.equal((gap as EngineError).code, 'replication_gap');
  assert.deepEqual(await replica.readChanges(0, 100), [], 'a refused batch writes nothing');
  assert.equal((await replica.historyPosition()).lastSeq, 0);
  await step('applyRecords first two', () => replica.applyRecords(records.slice(0, 2)));
  await step('applyRecords all (resend skipped)', () => replica.applyRecords(records));
  await step('applyRecords resend only', () => replica.applyRecords(records.slice(0, 3)));
  assert.deepEqual(await replica.multiGet(ids), await primary.multiGet(ids), 'same documents');
  assert.deepEqual(await replica.readChanges(0, 100), await primary.readChanges(0, 100), 'same change feed, timestamps included');
  assert.deepEqual(await replica.historyPosition(), position, 'same history position');
  await step('replica termAt', async () => [await replica.termAt(1), await replica.termAt(7)]);

  const held = (await step('holdFiles', () => primary.holdFiles())) as Awaited<ReturnType<ShardHandle['holdFiles']>>;
  assert.equal(held.seq, 7);
  answers[answers.length - 1]![1] = comparable({ ...held, hold: '<hold>' });
  await step('write while held', () => primary.write({ kind: 'index', id: 'e', source: { title: 'while held', n: 5 } }));
  await step('releaseFiles', () => primary.releaseFiles(held.hold));
  await step('releaseFiles unknown', () => primary.releaseFiles(held.hold + 1_000));
  await step('epoch after release', () => primary.epoch());
  return answers;
}
