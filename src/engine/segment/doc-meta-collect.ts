/**
 * Collects the doc meta of a new segment: each kept doc's `_id` bytes into one pool, its seq_no,
 * version and primary term. When every source is a segment, the ids are copied from the sources'
 * decoded sorted ids (no string per doc) and the new sorted order is a k-way merge of the sources'
 * sorted orders (ties keep doc order: within a source its file has them so, across sources the
 * earlier source holds the lower new docs), so the writer has nothing to sort.
 */
import type { CollectedDocMeta } from './doc-meta-store.ts';
import type { DocMetaStore } from './doc-meta-store.ts';
import type { IdList } from './doc-meta-ids.ts';
import { SegmentReader } from './segment-reader.ts';
import type { WriteContext } from './write-context.ts';

/** Reads the meta of every kept doc from the sources. */
export async function collectDocMeta(context: WriteContext): Promise<CollectedDocMeta> {
  const maxDoc = context.maxDoc;
  const seqNos = new Float64Array(maxDoc);
  const versions = new Float64Array(maxDoc);
  const primaryTerms = new Float64Array(maxDoc);
  const stores = context.sources.map(({ reader }) => (reader instanceof SegmentReader ? reader.docMetaStore() : null));
  const pool = new IdPool(maxDoc);
  for (let sourceIndex = 0; sourceIndex < context.sources.length; sourceIndex++) {
    const { reader, docMap } = context.sources[sourceIndex]!;
    const store = stores[sourceIndex]!;
    if (store === null) {
      for (let doc = 0; doc < docMap.length; doc++) {
        const newDoc = docMap[doc]!;
        if (newDoc < 0) continue;
        const meta = reader.meta(doc);
        pool.addString(newDoc, meta.id);
        seqNos[newDoc] = meta.seqNo;
        versions[newDoc] = meta.version;
        primaryTerms[newDoc] = meta.primaryTerm;
        if (context.pauseDue()) await context.pause();
      }
      continue;
    }
    store.copyNumbersTo(docMap, seqNos, versions, primaryTerms);
    const ids = store.sortedIds();
    const { bytes, starts } = ids.decodedIds();
    for (let doc = 0; doc < docMap.length; doc++) {
      const newDoc = docMap[doc]!;
      if (newDoc < 0) continue;
      const k = ids.sortedIndexOf(doc);
      pool.addBytes(newDoc, bytes, starts[k]!, starts[k + 1]!);
      if (context.pauseDue()) await context.pause();
    }
  }
  const sortedDocs = stores.includes(null) ? null : await mergeSortedDocs(context, stores as DocMetaStore[]);
  return { ids: pool.finish(sortedDocs), seqNos, versions, primaryTerms };
}

/** The new docs by id bytes: the sources' kept docs merged by their sorted ids. */
async function mergeSortedDocs(context: WriteContext, stores: DocMetaStore[]): Promise<Int32Array> {
  const count = stores.length;
  const sortedDocs = new Int32Array(context.maxDoc);
  const ids = stores.map((store) => store.sortedIds());
  const decoded = ids.map((sorted) => sorted.decodedIds());
  const docMaps = context.sources.map((source) => source.docMap);
  // Per source: the sorted position of its next kept doc, and that doc's new number.
  const heads = new Int32Array(count);
  const headDocs = new Int32Array(count);
  const advance = (source: number, k: number): void => {
    const docMap = docMaps[source]!;
    const sorted = ids[source]!;
    for (; k < sorted.maxDoc; k++) {
      const newDoc = docMap[sorted.sortedDocAt(k)]!;
      if (newDoc >= 0) {
        headDocs[source] = newDoc;
        break;
      }
    }
    heads[source] = k;
  };
  for (let source = 0; source < count; source++) advance(source, 0);
  for (let out = 0; out < sortedDocs.length; out++) {
    let best = -1;
    for (let source = 0; source < count; source++) {
      if (heads[source]! >= ids[source]!.maxDoc) continue;
      if (best === -1 || compareHeads(decoded[source]!, heads[source]!, decoded[best]!, heads[best]!) < 0) best = source;
    }
    if (best === -1) throw new RangeError(`doc meta sources hold ${out} kept ids, expected ${sortedDocs.length}`);
    sortedDocs[out] = headDocs[best]!;
    advance(best, heads[best]! + 1);
    if (context.pauseDue()) await context.pause();
  }
  return sortedDocs;
}

/** Compares id `k` of one decoded list with id `j` of another by bytes. */
function compareHeads(
  left: { bytes: Buffer; starts: Uint32Array },
  k: number,
  right: { bytes: Buffer; starts: Uint32Array },
  j: number,
): number {
  const leftBytes = left.bytes;
  const rightBytes = right.bytes;
  const leftStart = left.starts[k]!;
  const rightStart = right.starts[j]!;
  const leftLength = left.starts[k + 1]! - leftStart;
  const rightLength = right.starts[j + 1]! - rightStart;
  const common = Math.min(leftLength, rightLength);
  for (let i = 0; i < common; i++) {
    const difference = leftBytes[leftStart + i]! - rightBytes[rightStart + i]!;
    if (difference !== 0) return difference;
  }
  return leftLength - rightLength;
}

/** The id bytes of the new docs, added in new doc order into one growing buffer. */
class IdPool {
  private bytes = Buffer.allocUnsafe(1024);
  private readonly starts: Uint32Array;
  private end = 0;

  constructor(maxDoc: number) {
    this.starts = new Uint32Array(maxDoc + 1);
  }

  addBytes(newDoc: number, from: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (this.end + length > this.bytes.length) this.grow(length);
    const bytes = this.bytes;
    let at = this.end;
    for (let i = start; i < end; i++) bytes[at++] = from[i]!;
    this.end = at;
    this.starts[newDoc + 1] = at;
  }

  addString(newDoc: number, id: string): void {
    // A UTF-16 code unit takes at most 3 UTF-8 bytes.
    if (this.end + id.length * 3 > this.bytes.length) this.grow(id.length * 3);
    this.end += this.bytes.write(id, this.end, 'utf8');
    this.starts[newDoc + 1] = this.end;
  }

  finish(sortedDocs: Int32Array | null): IdList {
    return { bytes: this.bytes.subarray(0, this.end), starts: this.starts, sortedDocs };
  }

  private grow(needed: number): void {
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.end + needed));
    this.bytes.copy(grown, 0, 0, this.end);
    this.bytes = grown;
  }
}
