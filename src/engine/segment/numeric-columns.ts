/**
 * Numeric columns (`columns.num`): per field either a dense float64 slot per doc (NaN =
 * missing), or per-doc offsets plus float64 values for multi-valued fields. Inplace fields are
 * only listed here; their slots live in generation files (inplace-file.ts).
 */
import type { InplaceColumn, NumericColumn } from './leaf-reader.ts';
import { ByteReader, type ByteSink } from './byte-io.ts';
import type { WriteContext } from './write-context.ts';

/** How a numeric field is stored. */
export const NumericMode = { dense: 0, multi: 1, inplace: 2 } as const;

/** Column of a single-valued field: one float64 per doc, NaN when missing. */
export class DenseNumericColumn implements NumericColumn {
  constructor(readonly values: Float64Array) {}

  count(doc: number): number {
    return Number.isNaN(this.values[doc]!) ? 0 : 1;
  }

  value(doc: number, _index: number): number {
    return this.values[doc]!;
  }
}

/** Column of a multi-valued field: doc d holds values[offsets[d] .. offsets[d+1]). */
export class MultiNumericColumn implements NumericColumn {
  constructor(
    readonly offsets: Uint32Array,
    readonly values: Float64Array,
  ) {}

  count(doc: number): number {
    return this.offsets[doc + 1]! - this.offsets[doc]!;
  }

  value(doc: number, index: number): number {
    return this.values[this.offsets[doc]! + index]!;
  }
}

/** The writable slots of an inplace field; `set` records the field as dirty. */
export class SegmentInplaceColumn implements InplaceColumn {
  constructor(
    readonly field: string,
    readonly values: Float64Array,
    private readonly dirtyFields: Set<string>,
  ) {}

  count(doc: number): number {
    return Number.isNaN(this.values[doc]!) ? 0 : 1;
  }

  value(doc: number, _index: number): number {
    return this.values[doc]!;
  }

  get(doc: number): number {
    return this.values[doc]!;
  }

  set(doc: number, value: number): void {
    if (doc < 0 || doc >= this.values.length) throw new RangeError(`doc ${doc} out of range`);
    this.values[doc] = value;
    this.dirtyFields.add(this.field);
  }
}

/** A numeric field as collected from the sources. */
export interface CollectedNumericField {
  name: string;
  mode: (typeof NumericMode)[keyof typeof NumericMode];
  /** Dense and inplace: one slot per doc. Multi: all values. */
  values: Float64Array;
  /** Multi only: maxDoc + 1 offsets. */
  offsets: Uint32Array | null;
}

/** Gathers a numeric field's values of every kept doc (inplace fields as one slot per doc). */
export async function collectNumericField(context: WriteContext, name: string, inplace: boolean): Promise<CollectedNumericField> {
  const readers = context.sources.map((source) => source.reader);
  const columns = readers.map((reader) => reader.inplaceColumn(name) ?? reader.numericColumn(name));
  if (inplace) {
    const slots = new Float64Array(context.maxDoc).fill(NaN);
    await context.forEachKeptDoc((sourceIndex, oldDoc, newDoc) => {
      const column = columns[sourceIndex];
      if (column && column.count(oldDoc) > 0) slots[newDoc] = column.value(oldDoc, 0);
    });
    return { name, mode: NumericMode.inplace, values: slots, offsets: null };
  }
  const offsets = new Uint32Array(context.maxDoc + 1);
  let values = new Float64Array(Math.max(16, context.maxDoc));
  let total = 0;
  let multiValued = false;
  await context.forEachKeptDoc((sourceIndex, oldDoc, newDoc) => {
    const column = columns[sourceIndex];
    const count = column ? column.count(oldDoc) : 0;
    if (count > 1) multiValued = true;
    if (total + count > values.length) {
      const grown = new Float64Array(Math.max(values.length * 2, total + count));
      grown.set(values);
      values = grown;
    }
    for (let i = 0; i < count; i++) values[total + i] = column!.value(oldDoc, i);
    total += count;
    offsets[newDoc + 1] = total;
  });
  if (multiValued) return { name, mode: NumericMode.multi, values: values.slice(0, total), offsets };
  const dense = new Float64Array(context.maxDoc).fill(NaN);
  for (let doc = 0; doc < context.maxDoc; doc++) {
    if (offsets[doc + 1]! > offsets[doc]!) dense[doc] = values[offsets[doc]!]!;
  }
  return { name, mode: NumericMode.dense, values: dense, offsets: null };
}

/** Appends the numeric columns file body. */
export function writeNumericColumns(sink: ByteSink, maxDoc: number, fields: CollectedNumericField[]): void {
  sink.writeVarint(maxDoc);
  sink.writeVarint(fields.length);
  for (const field of fields) {
    sink.writeString(field.name);
    sink.writeByte(field.mode);
    if (field.mode === NumericMode.dense) {
      sink.alignTo(8);
      sink.writeFloat64Array(field.values);
    } else if (field.mode === NumericMode.multi) {
      sink.writeVarint(field.values.length);
      sink.alignTo(8);
      sink.writeFloat64Array(field.values);
      sink.writeUint32Array(field.offsets!);
    }
  }
}

/** A numeric field as loaded: a column, or the name of an inplace field whose slots load separately. */
export type LoadedNumericField = { name: string; inplace: false; column: NumericColumn } | { name: string; inplace: true };

/** Parses a loaded numeric columns file body (starting at `offset`). */
export function readNumericColumns(data: Uint8Array, offset: number, maxDoc: number): LoadedNumericField[] {
  const reader = new ByteReader(data, offset);
  const storedMaxDoc = reader.readVarint();
  if (storedMaxDoc !== maxDoc) throw new RangeError(`numeric columns hold ${storedMaxDoc} docs, segment has ${maxDoc}`);
  const fieldCount = reader.readVarint();
  const fields: LoadedNumericField[] = [];
  for (let f = 0; f < fieldCount; f++) {
    const name = reader.readString();
    const mode = reader.readByte();
    if (mode === NumericMode.dense) {
      reader.alignTo(8);
      fields.push({ name, inplace: false, column: new DenseNumericColumn(reader.readFloat64Array(maxDoc)) });
    } else if (mode === NumericMode.multi) {
      const total = reader.readVarint();
      reader.alignTo(8);
      const values = reader.readFloat64Array(total);
      const offsets = reader.readUint32Array(maxDoc + 1);
      if (offsets[maxDoc] !== total) throw new RangeError(`numeric column ${name} offsets do not match its values`);
      fields.push({ name, inplace: false, column: new MultiNumericColumn(offsets, values) });
    } else if (mode === NumericMode.inplace) {
      fields.push({ name, inplace: true });
    } else {
      throw new RangeError(`unknown numeric column mode ${mode} for ${name}`);
    }
  }
  return fields;
}
