import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { EngineError } from '../errors.ts';
import type { Mapping } from '../mapping/mapping.ts';
import { Shard } from './shard.ts';
import { decodeRecord } from './wal-records.ts';

const MAPPING: Mapping = {
  properties: {
    title: { type: 'text' },
    body: { type: 'text' },
    tag: { type: 'keyword' },
    n: { type: 'long' },
    views: { type: 'long', inplace: true },
  },
};
const SETTINGS = { epochIntervalMs: 3_600_000 };
const TEXT = '{"title": "first", "body": "a long body of words", "big": 9223372036854775807, "ratio": 1.0,\n "tag": "red", "n": 1, "views": 3}';

async function withShards(run: (open: (name: string) => Promise<Shard>) => Promise<void>): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'trove-field-update-'));
  const shards: Shard[] = [];
  try {
    await run(async (name) => {
      const shard = await Shard.open({ dir: path.join(root, name), uuid: name, mapping: MAPPING, settings: SETTINGS });
      shards.push(shard);
      return shard;
    });
  } finally {
    for (const shard of shards) await shard.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
}

function matches(shard: Shard, query: unknown): string[] {
  const searcher = shard.searcher();
  try {
    return searcher.query({ query, from: 0, size: 10 }).hits.map((hit) => searcher.fetch(hit, false).id).sort();
  } finally {
    searcher.release();
  }
}

test('a field update logs only the changed field and keeps the other fields as sent, across epochs, merges and restart', async () => {
  await withShards(async (open) => {
    let shard = await open('a');
    await shard.write({ kind: 'index', id: 'd', source: JSON.parse(TEXT) as Record<string, unknown>, sourceJson: TEXT });
    const result = await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'tag', value: 'blue' }, { op: 'append', field: 'title', value: 'second' }] });
    assert.equal(result.version, 2);
    const [record] = shard.readRecords(1, 10, Number.MAX_SAFE_INTEGER);
    const decoded = decodeRecord(Buffer.from(record!.payload));
    assert.equal(decoded.type, 'fields');
    assert.deepEqual(decoded.type === 'fields' ? Object.fromEntries(decoded.fields) : null, { tag: '"blue"', title: '["first","second"]' });
    const expected = '{"title": ["first","second"], "body": "a long body of words", "big": 9223372036854775807, "ratio": 1.0,\n "tag": "blue", "n": 1, "views": 3}';
    assert.equal(shard.sourceText('d')!.toString(), expected);
    assert.deepEqual(matches(shard, { term: { tag: 'blue' } }), ['d']);
    assert.deepEqual(matches(shard, { term: { tag: 'red' } }), []);
    assert.deepEqual(matches(shard, { match: { title: 'second' } }), ['d']);
    assert.deepEqual(matches(shard, { match_phrase: { title: 'first second' } }), [], 'values of an array are apart');
    await shard.epoch();
    await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'incr', field: 'n', value: 41 }] });
    await shard.epoch();
    await shard.close();
    shard = await open('a');
    const afterRestart = expected.replace('"n": 1', '"n": 42');
    assert.equal(shard.sourceText('d')!.toString(), afterRestart);
    assert.deepEqual(matches(shard, { range: { n: { gte: 42 } } }), ['d']);
    await shard.forceMerge({ maxSegments: 1 });
    assert.equal(shard.sourceText('d')!.toString(), afterRestart);
    assert.deepEqual(matches(shard, { term: { tag: 'blue' } }), ['d']);
    // An update planned on the whole document (an op on a literal dotted key) keeps the other fields' text too.
    await shard.write({ kind: 'update', id: 'd', doc: { 'x.y': 1 } });
    assert.equal(shard.sourceText('d')!.toString(), afterRestart.replace(/}$/, ',"x.y":1}'));
  });
});

test('a field update that does not fit the mapping changes and logs nothing; noops log nothing', async () => {
  await withShards(async (open) => {
    const shard = await open('a');
    await shard.write({ kind: 'index', id: 'd', source: { tag: 'red', n: 1 } });
    const before = shard.historyPosition().lastSeq;
    await assert.rejects(shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'n', value: 'not a number' }] }), EngineError);
    await assert.rejects(shard.write({ kind: 'update', id: 'd', doc: { n: { nested: true } } }), EngineError);
    const noop = await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'tag', value: 'red' }] });
    assert.equal(noop.result, 'noop');
    assert.equal(shard.historyPosition().lastSeq, before);
    assert.deepEqual(shard.get('d')!.source, { tag: 'red', n: 1 });
  });
});

test('a replica applying the primary records reaches the same documents and matches', async () => {
  await withShards(async (open) => {
    const primary = await open('primary');
    const replica = await open('replica');
    await primary.writeBatch([
      { kind: 'index', id: 'a', source: { title: 'one', tag: 'x', views: 1 } },
      { kind: 'index', id: 'b', source: { title: 'two', tag: 'y' } },
    ]);
    await primary.epoch();
    await primary.write({ kind: 'update', id: 'a', ops: [{ op: 'set', field: 'title', value: 'uno' }, { op: 'incr', field: 'views', value: 2 }] });
    await primary.write({ kind: 'update', id: 'b', ops: [{ op: 'rename', field: 'tag', value: 'label' }] });
    await replica.applyRecords(primary.readRecords(0, 100, Number.MAX_SAFE_INTEGER));
    for (const id of ['a', 'b']) assert.deepEqual(replica.get(id), primary.get(id));
    for (const query of [{ match: { title: 'uno' } }, { match: { title: 'one' } }, { exists: { field: 'tag' } }, { range: { views: { gte: 3 } } }]) {
      assert.deepEqual(matches(replica, query), matches(primary, query));
    }
  });
});

test('a snapshot keeps seeing a document as it was before a later field update', async () => {
  await withShards(async (open) => {
    const shard = await open('a');
    await shard.write({ kind: 'index', id: 'd', source: { title: 'before', tag: 'old' } });
    await shard.epoch();
    const snapshot = shard.snapshot();
    try {
      await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'title', value: 'after' }, { op: 'set', field: 'tag', value: 'new' }] });
      const hits = snapshot.query({ query: { match: { title: 'before' } }, from: 0, size: 10 }).hits;
      assert.equal(hits.length, 1);
      assert.deepEqual(snapshot.fetch(hits[0]!).source, { title: 'before', tag: 'old' });
      assert.equal(snapshot.query({ query: { term: { tag: 'new' } }, from: 0, size: 10 }).hits.length, 0);
      assert.deepEqual(matches(shard, { term: { tag: 'new' } }), ['d']);
    } finally {
      snapshot.release();
    }
  });
});

test('snapshots of one overlay version share its frozen views; a later update makes a new version and leaves older snapshots as they were', async () => {
  await withShards(async (open) => {
    const shard = await open('a');
    await shard.writeBatch(Array.from({ length: 40 }, (_, n) => ({ kind: 'index' as const, id: `d${n}`, source: { title: n % 2 === 0 ? 'red fox' : 'red fox runs far away', tag: n % 2 === 0 ? 'even' : 'odd', n } })));
    await shard.epoch();
    const ask = (searcher: ReturnType<Shard['snapshot']>) => {
      const scored = searcher.query({ query: { match: { title: 'fox' } }, from: 0, size: 3 }).hits.map((hit) => [searcher.fetch(hit, false).id, hit.score]);
      const ranged = searcher.query({ query: { range: { n: { gte: 100 } } }, from: 0, size: 10 }).hits.map((hit) => searcher.fetch(hit, false).id);
      const tags = searcher.query({ query: { match_all: {} }, from: 0, size: 0, aggs: { tags: { terms: { field: 'tag' } } } }).aggs;
      return { scored, ranged, tags };
    };
    const live = () => {
      const searcher = shard.searcher();
      try {
        return ask(searcher);
      } finally {
        searcher.release();
      }
    };
    const update = (id: string, title: string, tag: string, n: number) =>
      shard.write({ kind: 'update', id, ops: [{ op: 'set', field: 'title', value: title }, { op: 'set', field: 'tag', value: tag }, { op: 'set', field: 'n', value: n }] });
    await update('d1', 'fox', 'new', 101);
    const first = shard.snapshot();
    const second = shard.snapshot();
    try {
      const frozen = (searcher: ReturnType<Shard['snapshot']>) => (searcher.leaves[0] as unknown as { leaf: { overlay: unknown } }).leaf.overlay;
      assert.equal(frozen(first), frozen(second), 'one frozen overlay per version');
      const atFirst = ask(first);
      assert.equal(atFirst.scored[0]![0], 'd1');
      assert.deepEqual(atFirst.ranged, ['d1']);
      assert.deepEqual(ask(second), atFirst);
      assert.deepEqual(live(), atFirst);
      await update('d3', 'fox', 'newer', 102);
      await update('d1', 'red fox runs far away', 'odd', 1);
      const third = shard.snapshot();
      try {
        assert.notEqual(frozen(third), frozen(first));
        assert.deepEqual(ask(first), atFirst, 'an older snapshot keeps its version, views included');
        const atThird = ask(third);
        assert.equal(atThird.scored[0]![0], 'd3');
        assert.deepEqual(atThird.ranged, ['d3']);
        assert.ok(atFirst.tags !== undefined);
        assert.notDeepEqual(atThird.tags, atFirst.tags);
        assert.deepEqual(ask(third), atThird);
        assert.deepEqual(live(), atThird);
      } finally {
        third.release();
      }
    } finally {
      first.release();
      second.release();
    }
  });
});

test('field and inplace updates give the document the primary term of the write, as a re-index does, across restart', async () => {
  await withShards(async (open) => {
    let shard = await open('a');
    await shard.writeBatch([
      { kind: 'index', id: 'f', source: { tag: 'x', views: 1 } },
      { kind: 'index', id: 'p', source: { tag: 'x', views: 1 } },
    ]);
    await shard.epoch();
    shard.setPrimaryTerm(2);
    const field = await shard.write({ kind: 'update', id: 'f', ops: [{ op: 'set', field: 'tag', value: 'y' }] });
    const inplace = await shard.write({ kind: 'update', id: 'p', ops: [{ op: 'incr', field: 'views', value: 1 }] });
    assert.equal(inplace.inplace, true);
    for (const [id, result] of [['f', field], ['p', inplace]] as const) {
      assert.equal(shard.get(id)!.primaryTerm, 2);
      await shard.write({ kind: 'update', id, ops: [{ op: 'set', field: 'tag', value: 'z' }], ifSeqNo: result.seqNo, ifPrimaryTerm: 2 });
    }
    await shard.epoch();
    await shard.close();
    shard = await open('a');
    for (const id of ['f', 'p']) assert.equal(shard.get(id)!.primaryTerm, 2);
  });
});

test('an update touching a copy_to source or target is planned on the whole document, so copies stay whole', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'trove-field-update-copy-'));
  const mapping: Mapping = {
    properties: { first: { type: 'text', copy_to: ['all'] }, last: { type: 'text', copy_to: ['all'] }, all: { type: 'text' }, n: { type: 'long' } },
  } as Mapping;
  const shard = await Shard.open({ dir: root, uuid: 'copy', mapping, settings: SETTINGS });
  try {
    await shard.write({ kind: 'index', id: 'd', source: { first: 'ada', last: 'lovelace', n: 1 } });
    await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'first', value: 'augusta' }] });
    assert.deepEqual(matches(shard, { match: { all: 'augusta lovelace' } }), ['d']);
    assert.deepEqual(matches(shard, { match: { all: 'ada' } }), []);
    const [, record] = shard.readRecords(0, 10, Number.MAX_SAFE_INTEGER);
    assert.equal(decodeRecord(Buffer.from(record!.payload)).type, 'index');
    await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'incr', field: 'n', value: 1 }] });
    const [, , fields] = shard.readRecords(0, 10, Number.MAX_SAFE_INTEGER);
    assert.equal(decodeRecord(Buffer.from(fields!.payload)).type, 'fields', 'a field no copy involves stays field-level');
    assert.deepEqual(matches(shard, { match: { all: 'lovelace' } }), ['d']);
  } finally {
    await shard.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a numeric terms query with hundreds of values reads a field that field updates overlay', async () => {
  await withShards(async (open) => {
    const shard = await open('terms');
    await shard.writeBatch(Array.from({ length: 2000 }, (_, n) => ({ kind: 'index' as const, id: `d${n}`, source: { n } })));
    await shard.epoch();
    for (let n = 0; n < 40; n += 4) await shard.write({ kind: 'update', id: `d${n}`, ops: [{ op: 'set', field: 'n', value: 5000 + n }] });
    const values = [...Array.from({ length: 300 }, (_, n) => n), 5000, 5004, 5036];
    const searcher = shard.snapshot();
    try {
      // 0..299 less the 10 moved docs, plus the 3 moved values asked for.
      assert.equal(searcher.query({ query: { terms: { n: values } }, from: 0, size: 0, trackTotalHits: true }).total.value, 300 - 10 + 3);
    } finally {
      searcher.release();
    }
  });
});

test('field updates of geo_point and flattened fields replace their hidden companions; one of an ignore_malformed field rewrites _ignored', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'trove-field-update-companions-'));
  const mapping: Mapping = {
    properties: {
      place: { type: 'geo_point' },
      labels: { type: 'flattened' },
      count: { type: 'integer', ignore_malformed: true },
      n: { type: 'long' },
    },
  };
  const shard = await Shard.open({ dir: path.join(root, 's'), uuid: 's', mapping, settings: SETTINGS });
  try {
    await shard.write({ kind: 'index', id: 'd', source: { place: '1,1', labels: { color: 'red' }, count: 'x', n: 1 } });
    const near = (point: string): unknown => ({ geo_distance: { distance: '1km', place: point } });
    await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'place', value: '5,5' }] });
    assert.deepEqual(matches(shard, near('5,5')), ['d']);
    assert.deepEqual(matches(shard, near('1,1')), []);
    await shard.write({ kind: 'update', id: 'd', doc: { labels: { color: 'blue' } } });
    assert.deepEqual(matches(shard, { term: { 'labels.color': 'blue' } }), ['d']);
    assert.deepEqual(matches(shard, { term: { 'labels.color': 'red' } }), []);
    await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'n', value: 2 }] });
    assert.deepEqual(matches(shard, { term: { _ignored: 'count' } }), ['d'], 'an update of other fields keeps _ignored');
    await shard.write({ kind: 'update', id: 'd', ops: [{ op: 'set', field: 'count', value: 3 }] });
    assert.deepEqual(matches(shard, { term: { _ignored: 'count' } }), []);
    assert.deepEqual(matches(shard, { term: { count: 3 } }), ['d']);
    await shard.write({ kind: 'update', id: 'd', doc: { count: 'y' } });
    assert.deepEqual(matches(shard, { exists: { field: '_ignored' } }), ['d']);
    assert.deepEqual(matches(shard, near('5,5')), ['d'], 'the whole-document plan keeps the other fields');
  } finally {
    await shard.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
});
