/**
 * Doc meta (`docmeta` file): `_id`s sorted by UTF-8 bytes and front coded, the doc of each
 * sorted id (bit-packed; its inverse gives doc -> id), and seq_no / version / primary term per
 * doc, each frame-of-reference bit-packed when the values are integers in a 31-bit range.
 * Inplace updates change a doc's seq_no and version without rewriting it: those two arrays are
 * then persisted as generation files `meta.<gen>` (generation 0 = the docmeta file itself).
 */
import type { DocMeta } from './leaf-reader.ts';
import { ByteReader, type ByteSink } from './byte-io.ts';
import { bitsRequired, bitsRequiredFor, packInto, unpackFrom } from './bitpack.ts';
import type { WriteContext } from './write-context.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, corruptFile, readVerifiedFile, writeSmallFile, type FileChecksum } from './segment-file.ts';

const PACKED = 0;
const RAW = 1;

/** Meta of the kept docs, in new doc order. */
export interface CollectedDocMeta {
  ids: Buffer[];
  seqNos: Float64Array;
  versions: Float64Array;
  primaryTerms: Float64Array;
}

/** Reads the meta of every kept doc from the sources. */
export async function collectDocMeta(context: WriteContext): Promise<CollectedDocMeta> {
  const maxDoc = context.maxDoc;
  const collected: CollectedDocMeta = {
    ids: new Array<Buffer>(maxDoc),
    seqNos: new Float64Array(maxDoc),
    versions: new Float64Array(maxDoc),
    primaryTerms: new Float64Array(maxDoc),
  };
  await context.forEachKeptDoc((sourceIndex, oldDoc, newDoc) => {
    const meta = context.sources[sourceIndex]!.reader.meta(oldDoc);
    collected.ids[newDoc] = Buffer.from(meta.id, 'utf8');
    collected.seqNos[newDoc] = meta.seqNo;
    collected.versions[newDoc] = meta.version;
    collected.primaryTerms[newDoc] = meta.primaryTerm;
  });
  return collected;
}

/** Appends the doc meta file body. */
export function writeDocMeta(sink: ByteSink, meta: CollectedDocMeta): void {
  const maxDoc = meta.ids.length;
  const order = new Int32Array(maxDoc);
  for (let doc = 0; doc < maxDoc; doc++) order[doc] = doc;
  // Latin-1 strings of the UTF-8 bytes compare like the bytes, and much faster than Buffer.compare.
  const keys = meta.ids.map((id) => id.toString('latin1'));
  order.sort((left, right) => (keys[left]! < keys[right]! ? -1 : keys[left]! > keys[right]! ? 1 : left - right));
  sink.writeVarint(maxDoc);
  let previous: Buffer = Buffer.alloc(0);
  for (let k = 0; k < maxDoc; k++) {
    const id = meta.ids[order[k]!]!;
    const limit = Math.min(previous.length, id.length);
    let prefix = 0;
    while (prefix < limit && previous[prefix] === id[prefix]) prefix++;
    sink.writeVarint(prefix);
    sink.writeVarint(id.length - prefix);
    sink.writeBytes(id.subarray(prefix));
    previous = id;
  }
  const width = bitsRequired(Math.max(0, maxDoc - 1));
  sink.writeByte(width);
  packInto(sink, order, maxDoc, width);
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

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const FILTER_PROBES = 4;

/** Loaded doc meta: id lookups and per-doc meta. */
export class DocMetaStore {
  private readonly idBytes: Buffer;
  private readonly idStarts: Uint32Array;
  private readonly sortedDocs: Int32Array;
  private readonly sortedIndexOfDoc: Int32Array;
  private readonly seqNos: Float64Array;
  private readonly versions: Float64Array;
  private readonly primaryTerms: Float64Array;
  /** Bloom filter over the ids: most lookups of an id this segment lacks end here. */
  private readonly idFilter: Uint32Array;
  private readonly idFilterMask: number;

  /** Parses a loaded doc meta file body (starting at `offset`). */
  constructor(data: Uint8Array, offset: number, maxDoc: number) {
    const reader = new ByteReader(data, offset);
    const storedMaxDoc = reader.readVarint();
    if (storedMaxDoc !== maxDoc) throw new RangeError(`doc meta holds ${storedMaxDoc} docs, segment has ${maxDoc}`);
    const idsOffset = reader.pos;
    const idStarts = new Uint32Array(maxDoc + 1);
    let previousLength = 0;
    for (let k = 0; k < maxDoc; k++) {
      const prefix = reader.readVarint();
      const suffix = reader.readVarint();
      if (prefix > previousLength) throw new RangeError('bad id prefix');
      reader.pos += suffix;
      previousLength = prefix + suffix;
      idStarts[k + 1] = idStarts[k]! + previousLength;
    }
    let filterBits = 64;
    while (filterBits < maxDoc * 12) filterBits *= 2;
    this.idFilter = new Uint32Array(filterBits / 32);
    this.idFilterMask = filterBits - 1;
    // Ids are short: copying and hashing them byte by byte beats a native copy per id at open.
    const idBytes = Buffer.allocUnsafe(idStarts[maxDoc]!);
    reader.pos = idsOffset;
    for (let k = 0; k < maxDoc; k++) {
      const prefix = reader.readVarint();
      const suffix = reader.readVarint();
      const from = reader.pos;
      if (from + suffix > data.length) throw new RangeError('read past end of data');
      const start = idStarts[k]!;
      const previous = k > 0 ? idStarts[k - 1]! : 0;
      let hash = FNV_OFFSET;
      for (let i = 0; i < prefix; i++) {
        const byte = idBytes[previous + i]!;
        idBytes[start + i] = byte;
        hash = Math.imul(hash ^ byte, FNV_PRIME);
      }
      for (let i = 0; i < suffix; i++) {
        const byte = data[from + i]!;
        idBytes[start + prefix + i] = byte;
        hash = Math.imul(hash ^ byte, FNV_PRIME);
      }
      reader.pos = from + suffix;
      this.addToFilter(hash);
    }
    this.idBytes = idBytes;
    this.idStarts = idStarts;
    const width = reader.readByte();
    this.sortedDocs = new Int32Array(maxDoc);
    reader.pos = unpackFrom(data, reader.pos, maxDoc, width, this.sortedDocs);
    this.sortedIndexOfDoc = new Int32Array(maxDoc).fill(-1);
    for (let k = 0; k < maxDoc; k++) {
      const doc = this.sortedDocs[k]!;
      if (doc >= maxDoc || this.sortedIndexOfDoc[doc] !== -1) throw new RangeError('doc meta id order is not a permutation');
      this.sortedIndexOfDoc[doc] = k;
    }
    this.seqNos = readNumbers(reader, maxDoc);
    this.versions = readNumbers(reader, maxDoc);
    this.primaryTerms = readNumbers(reader, maxDoc);
  }

  /** Overwrites a doc's seq_no, version and primary term in memory. */
  setMeta(doc: number, seqNo: number, version: number, primaryTerm: number): void {
    if (doc < 0 || doc >= this.seqNos.length) throw new RangeError(`doc ${doc} out of range`);
    this.seqNos[doc] = seqNo;
    this.versions[doc] = version;
    this.primaryTerms[doc] = primaryTerm;
  }

  /** Copies of the current seq_nos, versions and primary terms (what a meta generation file persists). */
  snapshotMeta(): MetaGeneration {
    return { seqNos: this.seqNos.slice(), versions: this.versions.slice(), primaryTerms: this.primaryTerms.slice() };
  }

  /** Replaces seq_nos and versions (and primary terms, when the generation has them) by those of a loaded meta generation. */
  applyGeneration(generation: MetaGeneration): void {
    this.seqNos.set(generation.seqNos);
    this.versions.set(generation.versions);
    if (generation.primaryTerms) this.primaryTerms.set(generation.primaryTerms);
  }

  /** Id, seq_no, version and primary term of a doc. */
  meta(doc: number): DocMeta {
    const sortedIndex = this.sortedIndexOfDoc[doc];
    if (sortedIndex === undefined) throw new RangeError(`doc ${doc} out of range`);
    return {
      id: this.idBytes.toString('utf8', this.idStarts[sortedIndex]!, this.idStarts[sortedIndex + 1]!),
      seqNo: this.seqNos[doc]!,
      version: this.versions[doc]!,
      primaryTerm: this.primaryTerms[doc]!,
    };
  }

  /** The first doc with this id (in doc order) that `liveDocs` reports live, or -1. */
  lookup(id: string, liveDocs: { isLive(doc: number): boolean }): number {
    if (!this.mayContain(id)) return -1;
    const target = Buffer.from(id, 'utf8');
    const sortedDocs = this.sortedDocs;
    let low = 0;
    let high = sortedDocs.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compareId(target, middle) > 0) low = middle + 1;
      else high = middle;
    }
    for (let k = low; k < sortedDocs.length && this.compareId(target, k) === 0; k++) {
      if (liveDocs.isLive(sortedDocs[k]!)) return sortedDocs[k]!;
    }
    return -1;
  }

  private addToFilter(hash: number): void {
    const step = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) | 1;
    for (let probe = 0; probe < FILTER_PROBES; probe++) {
      const bit = (hash + probe * step) & this.idFilterMask;
      this.idFilter[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** False when the id is certainly not in this segment (FNV-1a over its UTF-8 bytes). */
  private mayContain(id: string): boolean {
    let hash = FNV_OFFSET;
    let ascii = true;
    for (let i = 0; i < id.length; i++) {
      const code = id.charCodeAt(i);
      if (code >= 0x80) {
        ascii = false;
        break;
      }
      hash = Math.imul(hash ^ code, FNV_PRIME);
    }
    if (!ascii) {
      hash = FNV_OFFSET;
      for (const byte of Buffer.from(id, 'utf8')) hash = Math.imul(hash ^ byte, FNV_PRIME);
    }
    const step = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) | 1;
    for (let probe = 0; probe < FILTER_PROBES; probe++) {
      const bit = (hash + probe * step) & this.idFilterMask;
      if ((this.idFilter[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  /** Byte-wise comparison of `target` with the k-th sorted id (negative, 0 or positive). */
  private compareId(target: Uint8Array, k: number): number {
    const idBytes = this.idBytes;
    const start = this.idStarts[k]!;
    const length = this.idStarts[k + 1]! - start;
    const common = Math.min(length, target.length);
    for (let i = 0; i < common; i++) {
      const difference = target[i]! - idBytes[start + i]!;
      if (difference !== 0) return difference;
    }
    return target.length - length;
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
