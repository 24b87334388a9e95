/**
 * Top-k by sort keys (fields, `_score`, `_doc`) with `search_after`. A binary heap of entries
 * whose root is the worst kept hit; a doc's values are computed into a scratch array and only
 * copied when the doc enters the heap. Keyword values are compared as strings, so hits from
 * different leaves (whose ordinals differ) compare correctly.
 */
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import type { ShardHit } from '../query/search-request.ts';
import type { SortKey, SortValue } from './sort-spec.ts';
import { compareSortValues } from './sort-spec.ts';
import { ExactLongColumn } from './exact-sort-values.ts';

interface FieldEntry {
  values: SortValue[];
  leaf: number;
  doc: number;
  score: number;
}

/** Keeps the `capacity` first hits in sort order. */
export class TopFieldCollector {
  private readonly heap: FieldEntry[] = [];
  private readonly scratch: SortValue[];
  private readonly numericColumns: (NumericColumn | null)[];
  private readonly keywordColumns: (KeywordColumn | null)[];
  /** Per key: the exact values of a long key in this leaf, when it holds any beyond ±(2^53 − 1). */
  private readonly exactColumns: (ExactLongColumn | null)[];
  private leafIndex = 0;
  private docBase = 0;
  private readonly tracksMaxScore: boolean;
  /** Highest score of every doc offered (when a key sorts by `_score`), else NaN. */
  maxScore = NaN;

  constructor(
    readonly capacity: number,
    private readonly keys: readonly SortKey[],
    private readonly searchAfter: readonly SortValue[] | null,
    private readonly scoresNeeded: boolean,
    /** Added to `_shard_doc` values: the shard's position in a point in time times 2^32. */
    private readonly shardDocBase = 0,
  ) {
    this.scratch = new Array<SortValue>(keys.length).fill(null);
    this.numericColumns = new Array<NumericColumn | null>(keys.length).fill(null);
    this.keywordColumns = new Array<KeywordColumn | null>(keys.length).fill(null);
    this.exactColumns = new Array<ExactLongColumn | null>(keys.length).fill(null);
    this.tracksMaxScore = scoresNeeded && keys.some((key) => key.kind === 'score');
  }

  /** Starts collecting another leaf; `docBase` is its first global doc number (for `_doc`). */
  setLeaf(leafIndex: number, leaf: LeafReader, docBase: number): void {
    this.leafIndex = leafIndex;
    this.docBase = docBase;
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      this.numericColumns[i] = key.kind === 'numeric' ? leaf.numericColumn(key.field) : null;
      this.keywordColumns[i] = key.kind === 'keyword' ? leaf.keywordColumn(key.field) : null;
      this.exactColumns[i] = key.exact !== undefined && (key.mode === 'min' || key.mode === 'max') ? ExactLongColumn.of(leaf.keywordColumn(key.exact.path), key.exact.type) : null;
    }
  }

  /** Offers a doc of the current leaf. */
  collect(doc: number, score: number): void {
    if (this.tracksMaxScore && !(score <= this.maxScore)) this.maxScore = score;
    const values = this.scratch;
    for (let i = 0; i < this.keys.length; i++) values[i] = this.valueOf(i, doc, score);
    if (this.searchAfter !== null && compareSortValues(this.keys, values, this.searchAfter) <= 0) return;
    const heap = this.heap;
    if (heap.length < this.capacity) {
      heap.push({ values: values.slice(), leaf: this.leafIndex, doc, score });
      this.siftUp(heap.length - 1);
      return;
    }
    if (this.capacity === 0 || compareSortValues(this.keys, values, heap[0]!.values) >= 0) return;
    heap[0] = { values: values.slice(), leaf: this.leafIndex, doc, score };
    this.siftDown(0);
  }

  /** The kept hits in sort order, with their sort values. */
  hits(): ShardHit[] {
    const entries = [...this.heap].sort((left, right) => this.compareEntries(left, right));
    return entries.map((entry) => ({
      leaf: entry.leaf,
      doc: entry.doc,
      score: this.scoresNeeded ? entry.score : NaN,
      sort: entry.values,
    }));
  }

  private valueOf(keyIndex: number, doc: number, score: number): SortValue {
    const key = this.keys[keyIndex]!;
    switch (key.kind) {
      case 'score':
        return score;
      case 'doc':
        return this.docBase + doc;
      case 'shard_doc':
        return this.shardDocBase + this.docBase + doc;
      case 'numeric': {
        const column = this.numericColumns[keyIndex]!;
        const count = column === null ? 0 : column.count(doc);
        if (count === 0) return missingValue(key);
        const value = numericModeValue(column!, doc, count, key.mode);
        const exact = this.exactColumns[keyIndex]!;
        if (exact === null || Number.isSafeInteger(value)) return value;
        return exact.extreme(doc, key.mode === 'min') ?? value;
      }
      case 'keyword': {
        const column = this.keywordColumns[keyIndex]!;
        const count = column === null ? 0 : column.count(doc);
        if (count === 0) return missingValue(key);
        return column!.term(column!.ordinal(doc, key.mode === 'max' ? count - 1 : 0));
      }
      case 'unmapped':
        return missingValue(key);
    }
  }

  /** Full order: sort values, then (leaf, doc) ascending. */
  private compareEntries(left: FieldEntry, right: FieldEntry): number {
    return compareSortValues(this.keys, left.values, right.values) || left.leaf - right.leaf || left.doc - right.doc;
  }

  private siftUp(start: number): void {
    const heap = this.heap;
    let slot = start;
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      if (this.compareEntries(heap[slot]!, heap[parent]!) <= 0) break;
      [heap[slot], heap[parent]] = [heap[parent]!, heap[slot]!];
      slot = parent;
    }
  }

  private siftDown(start: number): void {
    const heap = this.heap;
    let slot = start;
    for (;;) {
      const left = 2 * slot + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && this.compareEntries(heap[right]!, heap[left]!) > 0 ? right : left;
      if (this.compareEntries(heap[child]!, heap[slot]!) <= 0) break;
      [heap[slot], heap[child]] = [heap[child]!, heap[slot]!];
      slot = child;
    }
  }
}

function missingValue(key: SortKey): SortValue {
  return key.missing === 'first' || key.missing === 'last' ? null : key.missing;
}

/** One value of a multi-valued numeric field per the sort mode (values are sorted ascending). */
function numericModeValue(column: NumericColumn, doc: number, count: number, mode: SortKey['mode']): number {
  switch (mode) {
    case 'min':
      return column.value(doc, 0);
    case 'max':
      return column.value(doc, count - 1);
    case 'sum':
    case 'avg': {
      let sum = 0;
      for (let i = 0; i < count; i++) sum += column.value(doc, i);
      return mode === 'sum' ? sum : sum / count;
    }
    case 'median': {
      const middle = count >> 1;
      return count % 2 === 1 ? column.value(doc, middle) : (column.value(doc, middle - 1) + column.value(doc, middle)) / 2;
    }
  }
}
