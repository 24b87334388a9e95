/**
 * The `norms` file: per indexed field its BM25 statistics and, unless every doc's norm is 0,
 * one norm byte per doc. The bytes are copied from the sources' `norm()` (already quantised by
 * norms.ts), so a document scores the same before and after an epoch or merge.
 */
import type { FieldStats, LeafReader } from './leaf-reader.ts';
import type { ByteSink } from './byte-io.ts';
import { ByteReader } from './byte-io.ts';
import type { WriteContext } from './write-context.ts';

/** Norms and statistics of one field as loaded. */
export interface FieldNorms {
  stats: FieldStats;
  /** One byte per doc, or null when every doc has norm 0. */
  norms: Uint8Array | null;
}

/** A leaf that gives a field's norm bytes for every doc at once (a segment), or null when it has none. */
interface FieldNormsLeaf extends LeafReader {
  fieldNorms(field: string): Uint8Array | null;
}

function hasFieldNorms(reader: LeafReader): reader is FieldNormsLeaf {
  return typeof (reader as Partial<FieldNormsLeaf>).fieldNorms === 'function';
}

/** Copies the norm bytes of every kept doc; a field whose norms are all 0 maps to null. */
export async function collectNorms(context: WriteContext, fieldNames: string[]): Promise<Map<string, Uint8Array | null>> {
  const result = new Map<string, Uint8Array | null>();
  const arrays = fieldNames.map(() => new Uint8Array(context.maxDoc));
  const nonZero = fieldNames.map(() => false);
  const readers = context.sources.map((source) => source.reader);
  const present = readers.map((reader) => {
    const indexed = new Set(reader.indexedFields());
    return fieldNames.map((name) => indexed.has(name));
  });
  // Field by field: a segment gives a field's norm bytes at once, other leaves keep the field asked last at hand.
  for (let f = 0; f < fieldNames.length; f++) {
    const name = fieldNames[f]!;
    const norms = arrays[f]!;
    for (let sourceIndex = 0; sourceIndex < readers.length; sourceIndex++) {
      if (!present[sourceIndex]![f]) continue;
      const reader = readers[sourceIndex]!;
      const docMap = context.sources[sourceIndex]!.docMap;
      const bytes = hasFieldNorms(reader) ? reader.fieldNorms(name) : undefined;
      if (bytes === null) continue;
      for (let oldDoc = 0; oldDoc < docMap.length; oldDoc++) {
        const newDoc = docMap[oldDoc]!;
        if (newDoc < 0) continue;
        const norm = bytes !== undefined ? bytes[oldDoc]! : reader.norm(name, oldDoc);
        if (norm !== 0) {
          norms[newDoc] = norm;
          nonZero[f] = true;
        }
        if (context.pauseDue()) await context.pause();
      }
    }
  }
  fieldNames.forEach((name, f) => result.set(name, nonZero[f] ? arrays[f]! : null));
  return result;
}

/** Appends the norms file body. */
export function writeNorms(sink: ByteSink, maxDoc: number, fields: { name: string; stats: FieldStats; norms: Uint8Array | null }[]): void {
  sink.writeVarint(maxDoc);
  sink.writeVarint(fields.length);
  for (const field of fields) {
    sink.writeString(field.name);
    sink.writeVarint(field.stats.docCount);
    sink.writeVarint(field.stats.sumTotalTermFreq);
    if (field.norms === null) {
      sink.writeByte(0);
    } else {
      sink.writeByte(1);
      sink.writeBytes(field.norms);
    }
  }
}

/** Parses a loaded norms file body (starting at `offset`) into per-field views. */
export function readNorms(data: Uint8Array, offset: number, maxDoc: number): Map<string, FieldNorms> {
  const reader = new ByteReader(data, offset);
  const storedMaxDoc = reader.readVarint();
  if (storedMaxDoc !== maxDoc) throw new RangeError(`norms hold ${storedMaxDoc} docs, segment has ${maxDoc}`);
  const fieldCount = reader.readVarint();
  const result = new Map<string, FieldNorms>();
  for (let f = 0; f < fieldCount; f++) {
    const name = reader.readString();
    const docCount = reader.readVarint();
    const sumTotalTermFreq = reader.readVarint();
    const hasNorms = reader.readByte() === 1;
    const norms = hasNorms ? reader.readBytes(maxDoc) : null;
    result.set(name, { stats: { docCount, sumTotalTermFreq }, norms });
  }
  return result;
}
