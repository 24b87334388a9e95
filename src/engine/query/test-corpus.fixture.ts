/**
 * TEST FIXTURE ONLY: builds shards of real mutable-layer leaves from JSON documents, for the
 * query and collector tests. Not used by the engine.
 */
import type { FlatField, Mapping } from '../mapping/mapping.ts';
import { flattenMapping } from '../mapping/mapping.ts';
import { parseDocument } from '../mapping/parse-document.ts';
import { MutableSegment } from '../mutable/mutable-segment.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';

/** A document of a test corpus: its `_id` and source. */
export interface CorpusDoc {
  id: string;
  source: Record<string, unknown>;
}

/** Flattened fields of a mapping. */
export function fieldsOf(mapping: Mapping): Map<string, FlatField> {
  return flattenMapping(mapping);
}

/** The fields of the reference leaf's docs (TestLeaf, reference-leaf.fixture.ts) as queries see them. */
export const TEST_LEAF_FIELDS = fieldsOf({
  properties: {
    body: { type: 'text' },
    title: { type: 'text' },
    tag: { type: 'keyword' },
    status: { type: 'keyword' },
    price: { type: 'double' },
    sizes: { type: 'long' },
    views: { type: 'long' },
  },
});

/** One leaf holding the docs in order; ids listed in `deleted` are deleted afterwards. */
export function buildLeaf(
  docs: readonly CorpusDoc[],
  fields: ReadonlyMap<string, FlatField>,
  generation = 0,
  deleted: readonly string[] = [],
): MutableSegment {
  const inplace = [...fields.values()].filter((field) => field.inplace).map((field) => field.path);
  const leaf = new MutableSegment(generation, inplace);
  docs.forEach((doc, index) => {
    leaf.add(
      {
        id: doc.id,
        seqNo: index,
        version: 1,
        primaryTerm: 1,
        source: Buffer.from(JSON.stringify(doc.source)),
        parsed: parseDocument(doc.source, fields),
      },
      fields,
    );
  });
  for (const id of deleted) {
    const doc = leaf.lookupId(id);
    if (doc >= 0) leaf.deleteDoc(doc);
  }
  return leaf;
}

/** The docs split into `count` consecutive leaves (one shard with several leaves). */
export function buildLeaves(docs: readonly CorpusDoc[], fields: ReadonlyMap<string, FlatField>, count: number): LeafReader[] {
  const leaves: LeafReader[] = [];
  const perLeaf = Math.ceil(docs.length / count);
  for (let i = 0; i < count; i++) leaves.push(buildLeaf(docs.slice(i * perLeaf, (i + 1) * perLeaf), fields, i));
  return leaves;
}

/** The docs dealt round-robin into `count` groups (documents routed to shards). */
export function dealDocs<T>(docs: readonly T[], count: number): T[][] {
  const groups: T[][] = Array.from({ length: count }, () => []);
  docs.forEach((doc, index) => groups[index % count]!.push(doc));
  return groups;
}

/** The `_id`s of hits. */
export function hitIds(leaves: readonly LeafReader[], hits: readonly { leaf: number; doc: number }[]): string[] {
  return hits.map((hit) => leaves[hit.leaf]!.meta(hit.doc).id);
}
