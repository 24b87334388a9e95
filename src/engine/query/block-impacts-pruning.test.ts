import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LeafReader, PostingsCursor } from '../segment/leaf-reader.ts';
import { SegmentReader } from '../segment/segment-reader.ts';
import { buildDocMaps, writeSegment } from '../segment/segment-writer.ts';
import { TEST_FIELDS, TestLeaf, seededRandom, type TestDoc } from '../segment/reference-leaf.fixture.ts';
import { executeQuery } from './execute.ts';
import { TEST_LEAF_FIELDS } from './test-corpus.fixture.ts';

/**
 * The leaf seen through a proxy counting norm reads (a text term scorer reads one per scored doc);
 * `withoutImpacts` hides the cursors' competitive pairs, so blocks are bounded by (max freq, min norm).
 */
function counting(leaf: LeafReader, counter: { normReads: number }, withoutImpacts: boolean): LeafReader {
  return new Proxy(leaf, {
    get(target, property, receiver) {
      if (property === 'norm') {
        return (field: string, doc: number) => {
          counter.normReads++;
          return target.norm(field, doc);
        };
      }
      if (property === 'postings' && withoutImpacts) {
        return (field: string, term: string): PostingsCursor | null => {
          const cursor = target.postings(field, term);
          if (cursor !== null) Object.defineProperty(cursor, 'blockMaxBound', { value: undefined });
          return cursor;
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Docs of 5 to 400 tokens in which common terms occur in proportion to the length, as in prose:
 * a block's largest freq comes from a long doc and its smallest norm from a short one.
 */
function proseDocs(count: number, seed: number): TestDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const length = 5 + Math.floor(random() ** 2 * 400);
    const body: string[] = [];
    for (let i = 0; i < length; i++) {
      const draw = random();
      body.push(draw < 0.06 ? 'the' : draw < 0.09 ? 'of' : draw < 0.1 ? 'mail' : `w${Math.floor(random() * 3000)}`);
    }
    const title = Array.from({ length: 1 + Math.floor(random() * 8) }, () => (random() < 0.2 ? 'the' : `w${Math.floor(random() * 300)}`));
    return { id: `d${n}`, text: { body, title }, source: { n } };
  });
}

test('block impacts let top-10 pruning skip more blocks, with the hits of exhaustive scoring', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-impacts-pruning-'));
  try {
    const leaf = new TestLeaf(proseDocs(6000, 23));
    const [docMap] = buildDocMaps([leaf]);
    const meta = await writeSegment({ dir: path.join(dir, 'seg_000001'), name: 'seg_000001', sources: [{ reader: leaf, docMap: docMap! }], fields: TEST_FIELDS, inplaceFields: [] });
    const segment = SegmentReader.open(path.join(dir, 'seg_000001'), meta, { liveDocsGen: 0, inplaceGens: {} });
    try {
      // The first three are single terms.
      const queries = [
        { match: { body: 'the' } },
        { match: { body: 'of' } },
        { match: { body: 'mail' } },
        { match: { body: 'the of' } },
        { match: { body: 'mail of w7' } },
        { match: { title: 'the w1' } },
        { bool: { should: [{ match: { body: 'the' } }, { match: { title: 'the' } }] } },
      ];
      let withImpacts = 0;
      let withoutImpacts = 0;
      let singleWithImpacts = 0;
      let singleWithoutImpacts = 0;
      for (const [index, query] of queries.entries()) {
        for (const size of [1, 10]) {
          const label = `${JSON.stringify(query)} size ${size}`;
          const exhaustive = executeQuery([segment], TEST_LEAF_FIELDS, { query, from: 0, size, trackTotalHits: true });
          const tight = { normReads: 0 };
          const loose = { normReads: 0 };
          const pruned = executeQuery([counting(segment, tight, false)], TEST_LEAF_FIELDS, { query, from: 0, size, trackTotalHits: 100 });
          const prunedLoosely = executeQuery([counting(segment, loose, true)], TEST_LEAF_FIELDS, { query, from: 0, size, trackTotalHits: 100 });
          assert.deepEqual(pruned.hits, exhaustive.hits, label);
          assert.deepEqual(prunedLoosely.hits, exhaustive.hits, label);
          assert.ok(tight.normReads <= loose.normReads, `${label}: ${tight.normReads} docs scored with impacts, ${loose.normReads} without`);
          withImpacts += tight.normReads;
          withoutImpacts += loose.normReads;
          if (index >= 3) continue;
          singleWithImpacts += tight.normReads;
          singleWithoutImpacts += loose.normReads;
        }
      }
      // A single common term scores every doc without impacts: a long doc's freq with a short doc's norm beats the threshold in every block.
      assert.ok(singleWithImpacts < singleWithoutImpacts * 0.6, `single terms: ${singleWithImpacts} docs scored with impacts, ${singleWithoutImpacts} without`);
      assert.ok(withImpacts < withoutImpacts * 0.75, `${withImpacts} docs scored with impacts, ${withoutImpacts} without`);
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
