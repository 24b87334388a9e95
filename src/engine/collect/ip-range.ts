/**
 * `ip_range`: one bucket per range of addresses (`from` inclusive, `to` exclusive) or CIDR block
 * (`mask`), on `ip` fields and on keyword fields holding IPv4 / IPv6 text (values that are not
 * addresses are left out). Addresses compare as their 16-byte `ip` terms (mapping/ip.ts), so
 * IPv4 and IPv6 ranges mix like in Elasticsearch.
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { cidrTermRange, decodeIp, encodeIp } from '../mapping/ip.ts';
import { checkKeys, dslError, expectObject, readBoolean, readString } from '../query/dsl-reader.ts';
import type { KeywordColumn, LeafReader } from '../segment/leaf-reader.ts';
import { valueSource, type ValueSource } from './aggregation-options.ts';
import { mergeAggregations, type AggregationPartials, type IpRangePartial } from './aggregation-partials.ts';
import { MAX_AGGREGATION_RANGES, type AggregationSpec } from './aggregation-spec.ts';
import type { Aggregator, AggregatorGroup } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { GrowableFloats } from './bucket-ordinals.ts';

/** One range: bounds as `ip` terms (null for an open end), its key and the addresses it shows. */
export interface IpRange {
  key: string;
  /** Lowest term in the range, inclusive. */
  from: string | null;
  /** First term past the range. */
  to: string | null;
}

/** `ip_range`. */
export interface IpRangeSpec {
  type: 'ip_range';
  name: string;
  subs: AggregationSpec[];
  source: ValueSource;
  ranges: IpRange[];
  keyed: boolean;
}

/** The term right after `term` (null past the last address). */
function nextTerm(term: string): string | null {
  const bytes = Buffer.from(term, 'hex');
  for (let index = bytes.length - 1; index >= 0; index--) {
    if (bytes[index] !== 0xff) {
      bytes[index]!++;
      return bytes.toString('hex');
    }
    bytes[index] = 0;
  }
  return null;
}

/** Parses an `ip_range` aggregation. */
export function parseIpRangeSpec(name: string, options: Record<string, unknown>, fields: ReadonlyMap<string, FlatField> | null, subs: AggregationSpec[]): IpRangeSpec {
  checkKeys(options, ['field', 'ranges', 'keyed', 'script'], 'ip_range');
  const source = valueSource(options, fields, 'ip_range');
  if (source.kind === 'numeric') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [${source.format}] is not supported for aggregation [ip_range]`);
  }
  if (!Array.isArray(options.ranges) || options.ranges.length === 0) throw dslError('[ip_range] [ranges] must be a non-empty array');
  if (options.ranges.length > MAX_AGGREGATION_RANGES) {
    throw new EngineError('illegal_argument', `[ip_range] [ranges] lists ${options.ranges.length} ranges, at most ${MAX_AGGREGATION_RANGES} are allowed`);
  }
  const address = (value: unknown, which: string): string | null => {
    if (value === undefined || value === null) return null;
    const text = readString(value, which, 'ip_range');
    const term = encodeIp(text);
    if (term === null) throw new EngineError('illegal_argument', `[ip_range] [${which}] '${text}' is not an IP string literal.`);
    return term;
  };
  const ranges = options.ranges.map((entry): IpRange => {
    const range = expectObject(entry, 'ip_range.ranges');
    checkKeys(range, ['key', 'from', 'to', 'mask'], 'ip_range.ranges');
    const ownKey = range.key === undefined ? null : readString(range.key, 'key', 'ip_range');
    if (range.mask !== undefined) {
      if (range.from !== undefined || range.to !== undefined) throw dslError('[ip_range] a range with a [mask] cannot also have [from] or [to]');
      const mask = readString(range.mask, 'mask', 'ip_range');
      const block = cidrTermRange(mask);
      if (block === null) throw new EngineError('illegal_argument', `[ip_range] [mask] '${mask}' is not a CIDR block such as 10.0.0.0/8 or 2001:db8::/32`);
      return { key: ownKey ?? mask, from: block.lower, to: nextTerm(block.upper) };
    }
    const from = address(range.from, 'from');
    const to = address(range.to, 'to');
    return { key: ownKey ?? `${from === null ? '*' : decodeIp(from)}-${to === null ? '*' : decodeIp(to)}`, from, to };
  });
  const keyed = options.keyed === undefined ? false : readBoolean(options.keyed, 'keyed', 'ip_range');
  return { type: 'ip_range', name, subs, source, ranges, keyed };
}

/** Shard collector of an `ip_range`: bucket ordinal = owner · ranges + range index. */
export class IpRangeAggregator implements Aggregator {
  readonly name: string;
  private readonly docCounts = new GrowableFloats(0);
  private column: KeywordColumn | null = null;
  /** The `ip` term of each ordinal of the current leaf; '' for a value that is not an address, undefined until read. */
  private leafTerms: (string | undefined)[] = [];

  constructor(
    private readonly spec: IpRangeSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
  }

  setLeaf(leaf: LeafReader): void {
    this.column = this.spec.source.kind === 'keyword' ? leaf.keywordColumn(this.spec.source.field) : null;
    this.leafTerms = [];
    this.subs.setLeaf(leaf);
  }

  private termOf(column: KeywordColumn, ordinal: number): string {
    let term = this.leafTerms[ordinal];
    if (term === undefined) {
      const value = column.term(ordinal);
      term = this.spec.source.format === 'ip' ? value : (encodeIp(value) ?? '');
      this.leafTerms[ordinal] = term;
    }
    return term;
  }

  collect(doc: number, owner: number): void {
    const column = this.column;
    if (column === null) return;
    const count = column.count(doc);
    if (count === 0) return;
    const { ranges } = this.spec;
    for (let range = 0; range < ranges.length; range++) {
      const { from, to } = ranges[range]!;
      for (let i = 0; i < count; i++) {
        const term = this.termOf(column, column.ordinal(doc, i));
        if (term === '' || (from !== null && term < from) || (to !== null && term >= to)) continue;
        const ordinal = owner * ranges.length + range;
        this.docCounts.ensure(ordinal);
        this.docCounts.data[ordinal]!++;
        this.subs.collect(doc, ordinal);
        break;
      }
    }
  }

  partial(owner: number, budget: BucketBudget): IpRangePartial {
    const { ranges } = this.spec;
    budget.consume(ranges.length);
    return {
      type: 'ip_range',
      buckets: ranges.map((_, index) => {
        const ordinal = owner * ranges.length + index;
        return { docCount: this.docCounts.get(ordinal), aggs: this.subs.partials(ordinal, budget) };
      }),
    };
  }
}

/** Merges two shards' ip_range partials, range by range. */
export function mergeIpRanges(left: IpRangePartial, right: IpRangePartial): IpRangePartial {
  return {
    type: 'ip_range',
    buckets: left.buckets.map((bucket, index) => {
      const other = right.buckets[index]!;
      return { docCount: bucket.docCount + other.docCount, aggs: mergeAggregations([bucket.aggs, other.aggs]) };
    }),
  };
}

/** The rendered bucket heads of an ip_range, in request order: key, from and to as addresses, doc_count. */
export function ipRangeBucketHeads(spec: IpRangeSpec, partial: IpRangePartial): { head: Record<string, unknown>; aggs: AggregationPartials }[] {
  return spec.ranges.map((range, index) => {
    const bucket = partial.buckets[index] ?? { docCount: 0, aggs: {} };
    const head: Record<string, unknown> = { key: range.key };
    if (range.from !== null) head.from = decodeIp(range.from);
    if (range.to !== null) head.to = decodeIp(range.to);
    head.doc_count = bucket.docCount;
    return { head, aggs: bucket.aggs };
  });
}
