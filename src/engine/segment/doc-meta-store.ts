/**
 * Doc meta (`docmeta` file): `_id`s sorted by UTF-8 bytes with the maps between docs and sorted
 * ids (doc-meta-ids.ts), and seq_no / version / primary term per doc, each frame-of-reference
 * bit-packed when the values are integers in a 31-bit range. Version 2 bodies start with a zero
 * varint and the version byte (a version 1 body starts with its doc count, zero only for an empty
 * segment, whose next byte is a zero width) and are read in place: opening does no per-doc work.
 * Inplace updates change a doc's seq_no and version without rewriting it: those two arrays are
 * then persisted as generation files `meta.<gen>` (generation 0 = the docmeta file itself).
 */
import type { DocMeta, DocNumbers } from './leaf-reader.ts';
import { ByteReader, type ByteSink } from './byte-io.ts';
import { bitsRequiredFor, packedBytes, packInto, unpackFrom } from './bitpack.ts';
import { packedIntAt } from './bitpack.ts';
import { SortedIds, writeSortedIds, type IdList } from './doc-meta-ids.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, corruptFile, readVerifiedFile, writeSmallFile, type FileChecksum } from './segment-file.ts';

const PACKED = 0;
const RAW = 1;

/** Doc meta body version written by `writeDocMeta`. */
export const DOC_META_VERSION = 2;

/** Meta of the kept docs, in new doc order. */
export interface CollectedDocMeta {
  ids: IdList;
  seqNos: Float64Array;
  versions: Float64Array;
  primaryTerms: Float64Array;
}

/** Appends the doc meta file body (version DOC_META_VERSION). */
export function writeDocMeta(sink: ByteSink, meta: CollectedDocMeta): void {
  sink.writeVarint(0);
  sink.writeByte(DOC_META_VERSION);
  sink.writeVarint(meta.ids.starts.length - 1);
  writeSortedIds(sink, meta.ids);
  writeNumbers(sink, meta.seqNos);
  writeNumbers(sink, meta.versions);
  writeNumbers(sink, meta.primaryTerms);
}

function writeNumbers(sink: ByteSink, values: Float64Array): void {
  let min = Infinity;
  let max = -Infinity;
  let integral = true;
  for (const value of values) {
    if (!Number.isSafeInteger(value)) integral = false;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  if (values.length === 0 || (integral && max - min < 0x80000000)) {
    const offsets = new Int32Array(values.length);
    for (let i = 0; i < values.length; i++) offsets[i] = values[i]! - min;
    const width = bitsRequiredFor(offsets, offsets.length);
    sink.writeByte(PACKED);
    sink.writeF64(values.length === 0 ? 0 : min);
    sink.writeByte(width);
    packInto(sink, offsets, offsets.length, width);
    return;
  }
  sink.writeByte(RAW);
  sink.alignTo(8);
  sink.writeFloat64Array(values);
}

function readNumbers(reader: ByteReader, count: number): Float64Array {
  const mode = reader.readByte();
  if (mode === RAW) {
    reader.alignTo(8);
    return reader.readFloat64Array(count).slice();
  }
  if (mode !== PACKED) throw new RangeError(`unknown number encoding ${mode}`);
  const min = reader.readF64();
  const width = reader.readByte();
  const offsets = new Int32Array(count);
  reader.pos = unpackFrom(reader.data, reader.pos, count, width, offsets);
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) values[i] = min + offsets[i]!;
  return values;
}

/** A number column of a loaded file, read value by value in place. */
class StoredNumbers {
  private readonly view: DataView | null;

  private constructor(
    private readonly data: Uint8Array,
    private readonly offset: number,
    private readonly count: number,
    private readonly mode: number,
    private readonly min: number,
    private readonly width: number,
  ) {
    this.view = mode === RAW ? new DataView(data.buffer, data.byteOffset, data.byteLength) : null;
  }

  /** Takes the column at the reader's position and moves the reader past it. */
  static skip(reader: ByteReader, count: number): StoredNumbers {
    const mode = reader.readByte();
    let min = 0;
    let width = 0;
    if (mode === RAW) {
      reader.alignTo(8);
    } else if (mode === PACKED) {
      min = reader.readF64();
      width = reader.readByte();
      if (width > 31) throw new RangeError(`bad number width ${width}`);
    } else {
      throw new RangeError(`unknown number encoding ${mode}`);
    }
    const offset = reader.pos;
    reader.pos += mode === RAW ? count * 8 : packedBytes(count, width);
    if (reader.pos > reader.data.length) throw new RangeError('read past end of data');
    return new StoredNumbers(reader.data, offset, count, mode, min, width);
  }

  get(index: number): number {
    if (this.view !== null) return this.view.getFloat64(this.offset + index * 8, true);
    return this.min + packedIntAt(this.data, this.offset, this.width, index);
  }

  decode(): Float64Array {
    if (this.mode === RAW) return new ByteReader(this.data, this.offset).readFloat64Array(this.count).slice();
    const offsets = new Int32Array(this.count);
    unpackFrom(this.data, this.offset, this.count, this.width, offsets);
    const values = new Float64Array(this.count);
    for (let i = 0; i < this.count; i++) values[i] = this.min + offsets[i]!;
    return values;
  }
}

/** Loaded doc meta: id lookups and per-doc meta. */
export class DocMetaStore {
  private readonly ids: SortedIds;
  private readonly storedSeqNos: StoredNumbers;
  private readonly storedVersions: StoredNumbers;
  private readonly storedPrimaryTerms: StoredNumbers;
  /** The numbers decoded for updates (`setMeta`, `applyGeneration`); until then they are read in place. */
  private updated: Required<MetaGeneration> | null = null;

  /** Reads a loaded doc meta file (body starting at `offset`, CRC footer after it) of either version. */
  constructor(data: Uint8Array, offset: number, maxDoc: number) {
    const reader = new ByteReader(data, offset);
    let storedMaxDoc = reader.readVarint();
    const version = storedMaxDoc === 0 && data[reader.pos] !== 0 ? reader.readByte() : 1;
    if (version > DOC_META_VERSION) throw new RangeError(`unsupported doc meta version ${version}`);
    if (version > 1) storedMaxDoc = reader.readVarint();
    if (storedMaxDoc !== maxDoc) throw new RangeError(`doc meta holds ${storedMaxDoc} docs, segment has ${maxDoc}`);
    this.ids = version === 1 ? SortedIds.readVersion1(reader, maxDoc) : SortedIds.read(reader, maxDoc);
    this.storedSeqNos = StoredNumbers.skip(reader, maxDoc);
    this.storedVersions = StoredNumbers.skip(reader, maxDoc);
    this.storedPrimaryTerms = StoredNumbers.skip(reader, maxDoc);
    if (version > 1 && reader.pos !== data.length - FOOTER_BYTES) throw new RangeError('unexpected trailing bytes');
  }

  private decoded(): Required<MetaGeneration> {
    this.updated ??= {
      seqNos: this.storedSeqNos.decode(),
      versions: this.storedVersions.decode(),
      primaryTerms: this.storedPrimaryTerms.decode(),
    };
    return this.updated;
  }

  /** Overwrites a doc's seq_no, version and primary term in memory. */
  setMeta(doc: number, seqNo: number, version: number, primaryTerm: number): void {
    if (!(doc >= 0 && doc < this.ids.maxDoc)) throw new RangeError(`doc ${doc} out of range`);
    const numbers = this.decoded();
    numbers.seqNos[doc] = seqNo;
    numbers.versions[doc] = version;
    numbers.primaryTerms[doc] = primaryTerm;
  }

  /** Copies of the current seq_nos, versions and primary terms (what a meta generation file persists). */
  snapshotMeta(): MetaGeneration {
    const numbers = this.updated;
    if (numbers === null) {
      return { seqNos: this.storedSeqNos.decode(), versions: this.storedVersions.decode(), primaryTerms: this.storedPrimaryTerms.decode() };
    }
    return { seqNos: numbers.seqNos.slice(), versions: numbers.versions.slice(), primaryTerms: numbers.primaryTerms.slice() };
  }

  /** Replaces seq_nos and versions (and primary terms, when the generation has them) by those of a loaded meta generation. */
  applyGeneration(generation: MetaGeneration): void {
    const numbers = this.decoded();
    numbers.seqNos.set(generation.seqNos);
    numbers.versions.set(generation.versions);
    if (generation.primaryTerms) numbers.primaryTerms.set(generation.primaryTerms);
  }

  /** The sorted ids (merges read them in order). */
  sortedIds(): SortedIds {
    return this.ids;
  }

  /** Copies the seq_no, version and primary term of each doc `docMap` keeps to its new doc's slot. */
  copyNumbersTo(docMap: Int32Array, seqNos: Float64Array, versions: Float64Array, primaryTerms: Float64Array): void {
    const numbers = this.updated;
    for (let doc = 0; doc < docMap.length; doc++) {
      const newDoc = docMap[doc]!;
      if (newDoc < 0) continue;
      if (numbers !== null) {
        seqNos[newDoc] = numbers.seqNos[doc]!;
        versions[newDoc] = numbers.versions[doc]!;
        primaryTerms[newDoc] = numbers.primaryTerms[doc]!;
      } else {
        seqNos[newDoc] = this.storedSeqNos.get(doc);
        versions[newDoc] = this.storedVersions.get(doc);
        primaryTerms[newDoc] = this.storedPrimaryTerms.get(doc);
      }
    }
  }

  /** Id, seq_no, version and primary term of a doc. */
  meta(doc: number): DocMeta {
    const id = this.ids.idOf(doc);
    const numbers = this.updated;
    if (numbers !== null) {
      return { id, seqNo: numbers.seqNos[doc]!, version: numbers.versions[doc]!, primaryTerm: numbers.primaryTerms[doc]! };
    }
    return {
      id,
      seqNo: this.storedSeqNos.get(doc),
      version: this.storedVersions.get(doc),
      primaryTerm: this.storedPrimaryTerms.get(doc),
    };
  }

  /** Seq_no, version and primary term of a doc (its id is not read). */
  numbers(doc: number): DocNumbers {
    const numbers = this.updated;
    if (numbers !== null) return { seqNo: numbers.seqNos[doc]!, version: numbers.versions[doc]!, primaryTerm: numbers.primaryTerms[doc]! };
    return { seqNo: this.storedSeqNos.get(doc), version: this.storedVersions.get(doc), primaryTerm: this.storedPrimaryTerms.get(doc) };
  }

  /** The first doc with this id (in doc order) that `liveDocs` reports live, or -1. */
  lookup(id: string, liveDocs: { isLive(doc: number): boolean }): number {
    return this.ids.lookup(id, liveDocs);
  }
}

/** File name of a doc meta generation (seq_no and version per doc). */
export function metaFileName(generation: number): string {
  return `meta.${generation}`;
}

/** A meta generation: seq_no, version and (in files written since field-level updates) primary term per doc. */
export interface MetaGeneration {
  seqNos: Float64Array;
  versions: Float64Array;
  primaryTerms?: Float64Array;
}

/** Writes a doc meta generation file durably (the caller fsyncs the directory). */
export function writeMetaGenerationFile(path: string, generation: MetaGeneration): Promise<FileChecksum> {
  return writeSmallFile(path, FileMagic.docMetaGeneration, (sink) => {
    sink.writeVarint(generation.seqNos.length);
    writeNumbers(sink, generation.seqNos);
    writeNumbers(sink, generation.versions);
    if (generation.primaryTerms) writeNumbers(sink, generation.primaryTerms);
  });
}

/** Loads a doc meta generation file (older ones hold no primary terms). */
export function readMetaGenerationFile(path: string, maxDoc: number): MetaGeneration {
  const data = readVerifiedFile(path, FileMagic.docMetaGeneration);
  try {
    const reader = new ByteReader(data, HEADER_BYTES);
    const storedMaxDoc = reader.readVarint();
    if (storedMaxDoc !== maxDoc) throw new RangeError(`holds ${storedMaxDoc} docs, segment has ${maxDoc}`);
    const seqNos = readNumbers(reader, maxDoc);
    const versions = readNumbers(reader, maxDoc);
    const primaryTerms = reader.pos < data.length - FOOTER_BYTES ? readNumbers(reader, maxDoc) : undefined;
    if (reader.pos !== data.length - FOOTER_BYTES) throw new RangeError('unexpected trailing bytes');
    return { seqNos, versions, primaryTerms };
  } catch (error) {
    throw corruptFile(path, (error as Error).message);
  }
}
