/** `composite` on a shard (its first `size` keys after `after`), the merge of shard partials, and the rendering. */
import { EngineError } from '../errors.ts';
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import { mergeAggregations, mergeBucketsBy, type CompositePartial } from './aggregation-partials.ts';
import type { Aggregator, AggregatorGroup } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { BucketOrdinals, GrowableFloats, KeyDictionary } from './bucket-ordinals.ts';
import { compareCompositeKeys, type CompositeKey, type CompositeSource, type CompositeSpec } from './composite-spec.ts';
import { histogramKey } from './histogram-spec.ts';

/** Most keys one document may produce (the product of its sources' value counts); more is a 400. */
const MAX_KEYS_PER_DOC = 10_000;

/** Reads one source's distinct keys of a doc from the current leaf's column. */
class SourceReader {
  private keyword: KeywordColumn | null = null;
  private numeric: NumericColumn | null = null;

  constructor(readonly source: CompositeSource) {}

  setLeaf(leaf: LeafReader): void {
    const { field, kind } = this.source.source;
    this.keyword = kind === 'keyword' ? leaf.keywordColumn(field) : null;
    this.numeric = kind === 'numeric' ? leaf.numericColumn(field) : null;
  }

  /** The doc's keys, ascending and distinct; [null] for a doc without a value under missing_bucket, [] to leave it out. */
  keys(doc: number): (string | number | null)[] {
    const keys: (string | number | null)[] = [];
    if (this.keyword !== null) {
      const count = this.keyword.count(doc);
      for (let i = 0; i < count; i++) {
        const term = this.keyword.term(this.keyword.ordinal(doc, i));
        if (keys[keys.length - 1] !== term) keys.push(term);
      }
    } else if (this.numeric !== null) {
      const count = this.numeric.count(doc);
      const rounding = this.source.rounding;
      for (let i = 0; i < count; i++) {
        const value = this.numeric.value(doc, i);
        const key = rounding === null ? value : histogramKey(rounding, value);
        if (keys[keys.length - 1] !== key) keys.push(key);
      }
    }
    if (keys.length === 0 && this.source.missingBucket) keys.push(null);
    return keys;
  }
}

/** Shard collector of a `composite` aggregation. */
export class CompositeAggregator implements Aggregator {
  readonly name: string;
  private readonly readers: SourceReader[];
  private readonly keys = new KeyDictionary<string>();
  private readonly decoded: CompositeKey[] = [];
  private readonly ordinals = new BucketOrdinals();
  private readonly docCounts = new GrowableFloats(0);

  constructor(
    private readonly spec: CompositeSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
    this.readers = spec.sources.map((source) => new SourceReader(source));
  }

  setLeaf(leaf: LeafReader): void {
    for (const reader of this.readers) reader.setLeaf(leaf);
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    const perSource = this.readers.map((reader) => reader.keys(doc));
    let combinations = 1;
    for (const keys of perSource) combinations *= keys.length;
    if (combinations === 0) return;
    if (combinations > MAX_KEYS_PER_DOC) {
      throw new EngineError(
        'illegal_argument',
        `[composite] aggregation [${this.name}]: a document gives ${combinations} keys (the product of its sources' value counts), at most ${MAX_KEYS_PER_DOC} are allowed`,
      );
    }
    const key: CompositeKey = new Array(perSource.length);
    const visit = (index: number): void => {
      if (index === perSource.length) {
        this.collectKey(doc, owner, key);
        return;
      }
      for (const value of perSource[index]!) {
        key[index] = value;
        visit(index + 1);
      }
    };
    visit(0);
  }

  private collectKey(doc: number, owner: number, key: CompositeKey): void {
    const { spec } = this;
    if (spec.after !== null && compareCompositeKeys(spec.sources, key, spec.after) <= 0) return;
    const encoded = JSON.stringify(key);
    const keyId = this.keys.idOf(encoded);
    if (keyId === this.decoded.length) this.decoded.push([...key]);
    const ordinal = this.ordinals.ordinal(owner, keyId);
    this.docCounts.ensure(ordinal);
    this.docCounts.data[ordinal]!++;
    this.subs.collect(doc, ordinal);
  }

  partial(owner: number, budget: BucketBudget): CompositePartial {
    const { spec } = this;
    const ordinals = [...this.ordinals.ordinalsOf(owner)];
    const keyOf = (ordinal: number): CompositeKey => this.decoded[this.ordinals.keyIdOf(ordinal)]!;
    ordinals.sort((left, right) => compareCompositeKeys(spec.sources, keyOf(left), keyOf(right)));
    const kept = ordinals.slice(0, spec.size);
    budget.consume(kept.length);
    return {
      type: 'composite',
      buckets: kept.map((ordinal) => ({ key: keyOf(ordinal), docCount: this.docCounts.get(ordinal), aggs: this.subs.partials(ordinal, budget) })),
    };
  }
}

/** Merges two shards' composite partials: the union of their keys, counts summed (put in key order and cut to size when rendered). */
export function mergeComposite(left: CompositePartial, right: CompositePartial): CompositePartial {
  const buckets = mergeBucketsBy(left.buckets, right.buckets, (bucket) => JSON.stringify(bucket.key), (existing, bucket) => ({
    key: existing.key,
    docCount: existing.docCount + bucket.docCount,
    aggs: mergeAggregations([existing.aggs, bucket.aggs]),
  }));
  return { type: 'composite', buckets };
}
