/**
 * Generation files of inplace fields, `inplace.<field>.<gen>`: one little-endian float64 slot
 * per doc (NaN = missing). Generation 0 is written with the segment; later generations persist
 * the slots that `InplaceColumn.set` overwrote in memory.
 */
import { ByteReader } from './byte-io.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, corruptFile, readVerifiedFile, writeSmallFile, type FileChecksum } from './segment-file.ts';

/** File name of an inplace field generation (the field name is URI-encoded). */
export function inplaceFileName(field: string, generation: number): string {
  return `inplace.${encodeURIComponent(field)}.${generation}`;
}

/** Parses an inplace generation file name; null when the name is not one. */
export function parseInplaceFileName(name: string): { field: string; generation: number } | null {
  const match = /^inplace\.(.+)\.(\d+)$/.exec(name);
  if (match === null) return null;
  return { field: decodeURIComponent(match[1]!), generation: Number(match[2]) };
}

/** Writes an inplace generation file durably (the caller fsyncs the directory). */
export function writeInplaceFile(path: string, values: Float64Array): Promise<FileChecksum> {
  return writeSmallFile(path, FileMagic.inplace, (sink) => {
    sink.writeVarint(values.length);
    sink.alignTo(8);
    sink.writeFloat64Array(values);
  });
}

/** Loads an inplace generation into a fresh, writable Float64Array. */
export function readInplaceFile(path: string, maxDoc: number): Float64Array {
  const data = readVerifiedFile(path, FileMagic.inplace);
  const reader = new ByteReader(data, HEADER_BYTES);
  const storedMaxDoc = reader.readVarint();
  reader.alignTo(8);
  if (storedMaxDoc !== maxDoc || reader.pos + maxDoc * 8 + FOOTER_BYTES !== data.length) {
    throw corruptFile(path, `inplace slots hold ${storedMaxDoc} docs, segment has ${maxDoc}`);
  }
  return reader.readFloat64Array(maxDoc).slice();
}
