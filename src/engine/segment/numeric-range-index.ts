/**
 * The numeric range index (`columns.range`, format 2): per indexed numeric field, the positions
 * of its column values sorted by value. A range `[min, max]` is two binary searches over it and
 * its matching docs are one contiguous run of entries, so a selective range filter costs its
 * matches, not a scan of the column. Values themselves are not repeated: the index points into
 * the field's column in `columns.num` (dense: the entry is the doc; multi-valued: the entry is
 * the value's position in the column's value array).
 *
 * Inplace fields have no index: their slots change after the segment is written.
 */
import { EngineError } from '../errors.ts';
import type { NumericRangeIndex } from './leaf-reader.ts';
import { bitsRequiredFor, packInto, unpackFrom } from './bitpack.ts';
import { ByteReader, type ByteSink } from './byte-io.ts';
import { DenseNumericColumn, MultiNumericColumn, NumericMode, type CollectedNumericField } from './numeric-columns.ts';
import { corruptFile } from './segment-file.ts';
import { sortByValue } from './value-order.ts';
import type { WriteContext } from './write-context.ts';

/** A field's sorted entries, ready to be written. */
export interface CollectedRangeIndex {
  name: string;
  /** Positions into the column's values, ascending by (value, position); missing values left out. */
  entries: Int32Array;
}

/** Sorts a collected dense or multi-valued column's value positions by value (NaN slots left out). */
export async function collectRangeIndex(context: WriteContext, field: CollectedNumericField): Promise<CollectedRangeIndex> {
  if (field.mode === NumericMode.inplace) throw new EngineError('illegal_argument', `inplace field ${field.name} has no range index`);
  return { name: field.name, entries: await sortByValue(field.values, async () => {
      if (context.overdue()) await context.pause();
    }) };
}

/** Appends the range index file body. */
export function writeNumericRangeIndex(sink: ByteSink, maxDoc: number, fields: readonly CollectedRangeIndex[]): void {
  sink.writeVarint(maxDoc);
  sink.writeVarint(fields.length);
  for (const field of fields) {
    const width = bitsRequiredFor(field.entries, field.entries.length);
    sink.writeString(field.name);
    sink.writeVarint(field.entries.length);
    sink.writeByte(width);
    packInto(sink, field.entries, field.entries.length, width);
  }
}

/** Where a field's packed entries are in the loaded file. */
interface PackedEntries {
  count: number;
  width: number;
  offset: number;
}

/**
 * Parses a loaded range index file body: one index per field, bound to that field's column in
 * `columns`; entries are unpacked on first use. Fields without a dense or multi column are an error.
 */
export function readNumericRangeIndexes(
  filePath: string,
  data: Uint8Array,
  offset: number,
  maxDoc: number,
  columns: ReadonlyMap<string, unknown>,
): Map<string, SegmentRangeIndex> {
  const reader = new ByteReader(data, offset);
  const storedMaxDoc = reader.readVarint();
  if (storedMaxDoc !== maxDoc) throw new RangeError(`range index holds ${storedMaxDoc} docs, segment has ${maxDoc}`);
  const fieldCount = reader.readVarint();
  const indexes = new Map<string, SegmentRangeIndex>();
  for (let f = 0; f < fieldCount; f++) {
    const name = reader.readString();
    const count = reader.readVarint();
    const width = reader.readByte();
    if (width > 31) throw new RangeError(`range index of ${name} has entry width ${width}`);
    const packed: PackedEntries = { count, width, offset: reader.pos };
    reader.readBytes(Math.ceil((count * width) / 8));
    const column = columns.get(name);
    if (!(column instanceof DenseNumericColumn) && !(column instanceof MultiNumericColumn)) {
      throw new RangeError(`range index of ${name} has no dense or multi-valued column`);
    }
    if (count > column.values.length) throw new RangeError(`range index of ${name} has ${count} entries for ${column.values.length} values`);
    indexes.set(name, new SegmentRangeIndex(filePath, name, data, packed, column));
  }
  return indexes;
}

/** The range index of one field of a segment. */
export class SegmentRangeIndex implements NumericRangeIndex {
  private sortedEntries: Int32Array | null = null;
  private valueDocs: Int32Array | null = null;
  readonly size: number;
  readonly multiValued: boolean;
  private readonly values: Float64Array;

  constructor(
    private readonly filePath: string,
    readonly field: string,
    private readonly data: Uint8Array,
    private readonly packed: PackedEntries,
    private readonly column: DenseNumericColumn | MultiNumericColumn,
  ) {
    this.size = packed.count;
    this.multiValued = column instanceof MultiNumericColumn;
    this.values = column.values;
  }

  lowerBound(value: number): number {
    const entries = this.entries();
    const values = this.values;
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (values[entries[middle]!]! < value) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  upperBound(value: number): number {
    const entries = this.entries();
    const values = this.values;
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (values[entries[middle]!]! <= value) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  forEachDoc(from: number, to: number, visit: (doc: number) => void): void {
    const entries = this.entries();
    if (!this.multiValued) {
      for (let i = from; i < to; i++) visit(entries[i]!);
      return;
    }
    const docs = this.docsOfValues();
    for (let i = from; i < to; i++) visit(docs[entries[i]!]!);
  }

  /** The entries, unpacked and checked on first use. */
  private entries(): Int32Array {
    if (this.sortedEntries !== null) return this.sortedEntries;
    const { count, width, offset } = this.packed;
    const entries = new Int32Array(count);
    unpackFrom(this.data, offset, count, width, entries);
    const valueCount = this.values.length;
    for (let i = 0; i < count; i++) {
      const entry = entries[i]!;
      if (entry >= valueCount) throw corruptFile(this.filePath, `range index of ${this.field} points past its column (${entry} >= ${valueCount})`);
    }
    return (this.sortedEntries = entries);
  }

  /** Multi-valued columns: the doc of each value position, built on first use. */
  private docsOfValues(): Int32Array {
    if (this.valueDocs !== null) return this.valueDocs;
    const offsets = (this.column as MultiNumericColumn).offsets;
    const docs = new Int32Array(this.values.length);
    for (let doc = 0; doc + 1 < offsets.length; doc++) docs.fill(doc, offsets[doc]!, offsets[doc + 1]!);
    return (this.valueDocs = docs);
  }
}
