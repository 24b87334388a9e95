/**
 * The `_id`s of a doc meta file, sorted by UTF-8 bytes (ties in doc order), and the two maps
 * between docs and sorted positions. Since doc meta version 2 everything is laid out to be read
 * in place, so that opening a segment does no per-doc work:
 *   varint id byte total, varint block count, u32 block offsets (+ end) aligned to 4, then blocks
 *   of ID_BLOCK_SIZE front-coded ids (varint shared prefix, varint suffix length, suffix bytes;
 *   the first id of a block shares nothing, so a block decodes alone);
 *   byte width, the sorted position -> doc and doc -> sorted position maps bit-packed at it;
 *   u32 filter word count and the words of a Bloom filter over the ids, aligned to 4.
 * Version 1 files hold the ids front-coded in one run and only position -> doc: they are decoded
 * whole at open. A store asked for most of its ids (merges, verification) decodes them once too.
 */
import type { ByteReader, ByteSink } from './byte-io.ts';
import { bitsRequired, packedBytes, packedIntAt, packInto, unpackFrom } from './bitpack.ts';

/** Ids per front-coded block (a power of two). */
const ID_BLOCK_SIZE = 32;
const ID_BLOCK_SHIFT = 5;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const FILTER_PROBES = 4;
/** Bloom filter bits per id (rounded up to a power of two): about 1% false positives at 4 probes. */
const FILTER_BITS_PER_ID = 10;


function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = FNV_OFFSET;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
  return hash;
}

function addToFilter(filter: Uint32Array, mask: number, hash: number): void {
  const step = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) | 1;
  for (let probe = 0; probe < FILTER_PROBES; probe++) {
    const bit = (hash + probe * step) & mask;
    filter[bit >>> 5]! |= 1 << (bit & 31);
  }
}

function filterWords(idCount: number, bitsPerId: number): number {
  let bits = 64;
  while (bits < idCount * bitsPerId) bits *= 2;
  return bits / 32;
}

/**
 * The `_id`s of the docs of a segment being written: doc d's UTF-8 bytes are
 * `bytes[starts[d] .. starts[d + 1])`; `sortedDocs`, when known, lists the docs by id bytes, ties in
 * doc order (else `writeSortedIds` sorts them).
 */
export interface IdList {
  bytes: Buffer;
  starts: Uint32Array;
  sortedDocs: Int32Array | null;
}

/** The id list of ids given one by one, in doc order. */
export function idListOf(ids: readonly Uint8Array[]): IdList {
  const starts = new Uint32Array(ids.length + 1);
  for (let doc = 0; doc < ids.length; doc++) starts[doc + 1] = starts[doc]! + ids[doc]!.length;
  const bytes = Buffer.allocUnsafe(starts[ids.length]!);
  for (let doc = 0; doc < ids.length; doc++) bytes.set(ids[doc]!, starts[doc]!);
  return { bytes, starts, sortedDocs: null };
}

/** The docs of `ids` by id bytes, ties in doc order. */
function sortDocsById(ids: IdList): Int32Array {
  const { bytes, starts } = ids;
  const maxDoc = starts.length - 1;
  const order = new Int32Array(maxDoc);
  // Latin-1 strings of the UTF-8 bytes compare like the bytes, and much faster than Buffer.compare.
  const keys = new Array<string>(maxDoc);
  for (let doc = 0; doc < maxDoc; doc++) {
    order[doc] = doc;
    keys[doc] = bytes.toString('latin1', starts[doc]!, starts[doc + 1]!);
  }
  order.sort((left, right) => (keys[left]! < keys[right]! ? -1 : keys[left]! > keys[right]! ? 1 : left - right));
  return order;
}

/** Appends the version 2 id section for `ids`. */
export function writeSortedIds(sink: ByteSink, ids: IdList): void {
  const { bytes, starts } = ids;
  const maxDoc = starts.length - 1;
  const order = ids.sortedDocs ?? sortDocsById(ids);
  const blockCount = Math.ceil(maxDoc / ID_BLOCK_SIZE);
  const offsets = new Uint32Array(blockCount + 1);
  const prefixes = new Int32Array(maxDoc);
  let blockBytes = 0;
  for (let k = 0; k < maxDoc; k++) {
    const doc = order[k]!;
    const start = starts[doc]!;
    const length = starts[doc + 1]! - start;
    let prefix = 0;
    if ((k & (ID_BLOCK_SIZE - 1)) === 0) {
      offsets[k >>> ID_BLOCK_SHIFT] = blockBytes;
    } else {
      const previous = order[k - 1]!;
      const previousStart = starts[previous]!;
      const limit = Math.min(starts[previous + 1]! - previousStart, length);
      while (prefix < limit && bytes[previousStart + prefix] === bytes[start + prefix]) prefix++;
    }
    prefixes[k] = prefix;
    blockBytes += varintBytes(prefix) + varintBytes(length - prefix) + length - prefix;
  }
  offsets[blockCount] = blockBytes;
  const blocks = Buffer.allocUnsafe(blockBytes);
  let pos = 0;
  for (let k = 0; k < maxDoc; k++) {
    const doc = order[k]!;
    const prefix = prefixes[k]!;
    const from = starts[doc]! + prefix;
    const to = starts[doc + 1]!;
    pos = putVarint(blocks, pos, prefix);
    pos = putVarint(blocks, pos, to - from);
    for (let i = from; i < to; i++) blocks[pos++] = bytes[i]!;
  }
  sink.writeVarint(starts[maxDoc]! - starts[0]!);
  sink.writeVarint(blockCount);
  sink.alignTo(4);
  sink.writeUint32Array(offsets);
  sink.writeBytes(blocks);
  const width = bitsRequired(Math.max(0, maxDoc - 1));
  const inverse = new Int32Array(maxDoc);
  for (let k = 0; k < maxDoc; k++) inverse[order[k]!] = k;
  sink.writeByte(width);
  packInto(sink, order, maxDoc, width);
  packInto(sink, inverse, maxDoc, width);
  const filter = new Uint32Array(filterWords(maxDoc, FILTER_BITS_PER_ID));
  const mask = filter.length * 32 - 1;
  for (let doc = 0; doc < maxDoc; doc++) addToFilter(filter, mask, hashBytes(bytes, starts[doc]!, starts[doc + 1]!));
  sink.writeU32(filter.length);
  sink.alignTo(4);
  sink.writeUint32Array(filter);
}

function putVarint(out: Uint8Array, pos: number, value: number): number {
  while (value >= 0x80) {
    out[pos++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 128);
  }
  out[pos++] = value;
  return pos;
}

function varintBytes(value: number): number {
  let bytes = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    bytes++;
  }
  return bytes;
}

/** Sorted ids of a loaded doc meta file: id of a doc, and the docs holding an id. */
export class SortedIds {
  /** Decoded ids (sorted position k spans idStarts[k] .. idStarts[k + 1]), once decoded whole. */
  private idBytes: Buffer | null = null;
  private idStarts: Uint32Array | null = null;
  /** Block-coded ids read in place (version 2): offsets are relative to `blocksStart`. */
  private blockOffsets: Uint32Array | null = null;
  private blocksStart = 0;
  private totalIdBytes = 0;
  /** Position -> doc and doc -> position: decoded (version 1) or read packed at `mapWidth` from the data. */
  private sortedDocs: Int32Array | null = null;
  private sortedIndexOfDoc: Int32Array | null = null;
  private mapWidth = 0;
  private sortedDocsOffset = 0;
  private inverseOffset = 0;
  private filter: Uint32Array = new Uint32Array(2);
  private filterMask = 63;
  /** The id being decoded from a block, and the ids read one by one since open. */
  private scratch = Buffer.allocUnsafe(64);
  private scratchLength = 0;
  private singleReads = 0;

  private constructor(
    private readonly data: Uint8Array,
    readonly maxDoc: number,
  ) {}

  /** Reads the version 2 id section at the reader's position in place, leaving the reader past it. */
  static read(reader: ByteReader, maxDoc: number): SortedIds {
    const ids = new SortedIds(reader.data, maxDoc);
    ids.totalIdBytes = reader.readVarint();
    const blockCount = reader.readVarint();
    if (blockCount !== Math.ceil(maxDoc / ID_BLOCK_SIZE)) throw new RangeError(`doc meta holds ${blockCount} id blocks for ${maxDoc} docs`);
    reader.alignTo(4);
    ids.blockOffsets = reader.readUint32Array(blockCount + 1);
    ids.blocksStart = reader.pos;
    reader.pos += ids.blockOffsets[blockCount]!;
    if (reader.pos > reader.data.length) throw new RangeError('doc meta id blocks run past the end of the file');
    ids.mapWidth = reader.readByte();
    if (ids.mapWidth !== bitsRequired(Math.max(0, maxDoc - 1))) throw new RangeError(`bad doc map width ${ids.mapWidth}`);
    ids.sortedDocsOffset = reader.pos;
    ids.inverseOffset = ids.sortedDocsOffset + packedBytes(maxDoc, ids.mapWidth);
    reader.pos = ids.inverseOffset + packedBytes(maxDoc, ids.mapWidth);
    const words = reader.readU32();
    if (words < 2 || (words & (words - 1)) !== 0) throw new RangeError(`bad id filter size ${words}`);
    reader.alignTo(4);
    ids.filter = reader.readUint32Array(words);
    ids.filterMask = words * 32 - 1;
    return ids;
  }

  /** Decodes the version 1 id section (one front-coded run, position -> doc) and builds the filter. */
  static readVersion1(reader: ByteReader, maxDoc: number): SortedIds {
    const data = reader.data;
    const ids = new SortedIds(data, maxDoc);
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
    if (reader.pos > data.length) throw new RangeError('read past end of data');
    // Ids are short: copying them byte by byte beats a native copy per id.
    const idBytes = Buffer.allocUnsafe(idStarts[maxDoc]!);
    reader.pos = idsOffset;
    for (let k = 0; k < maxDoc; k++) {
      const prefix = reader.readVarint();
      const suffix = reader.readVarint();
      const from = reader.pos;
      const start = idStarts[k]!;
      const previous = k > 0 ? idStarts[k - 1]! : 0;
      for (let i = 0; i < prefix; i++) idBytes[start + i] = idBytes[previous + i]!;
      for (let i = 0; i < suffix; i++) idBytes[start + prefix + i] = data[from + i]!;
      reader.pos = from + suffix;
    }
    ids.idBytes = idBytes;
    ids.idStarts = idStarts;
    ids.totalIdBytes = idBytes.length;
    const width = reader.readByte();
    const sortedDocs = new Int32Array(maxDoc);
    reader.pos = unpackFrom(data, reader.pos, maxDoc, width, sortedDocs);
    const sortedIndexOfDoc = new Int32Array(maxDoc).fill(-1);
    for (let k = 0; k < maxDoc; k++) {
      const doc = sortedDocs[k]!;
      if (doc >= maxDoc || sortedIndexOfDoc[doc] !== -1) throw new RangeError('doc meta id order is not a permutation');
      sortedIndexOfDoc[doc] = k;
    }
    ids.sortedDocs = sortedDocs;
    ids.sortedIndexOfDoc = sortedIndexOfDoc;
    ids.filter = new Uint32Array(filterWords(maxDoc, 12));
    ids.filterMask = ids.filter.length * 32 - 1;
    for (let k = 0; k < maxDoc; k++) addToFilter(ids.filter, ids.filterMask, hashBytes(idBytes, idStarts[k]!, idStarts[k + 1]!));
    return ids;
  }

  /** The id of a doc. */
  idOf(doc: number): string {
    if (!(doc >= 0 && doc < this.maxDoc)) throw new RangeError(`doc ${doc} out of range`);
    const k = this.sortedIndexOf(doc);
    if (this.idStarts === null && ++this.singleReads > Math.max(256, this.maxDoc >>> 2)) this.decodeAll();
    const idStarts = this.idStarts;
    if (idStarts !== null) return this.idBytes!.toString('utf8', idStarts[k]!, idStarts[k + 1]!);
    let pos = this.blockStart(k >>> ID_BLOCK_SHIFT);
    for (let i = k & -ID_BLOCK_SIZE; i <= k; i++) pos = this.decodeEntry(pos);
    return this.scratch.toString('utf8', 0, this.scratchLength);
  }

  /** The first doc with this id (in doc order) that `liveDocs` reports live, or -1. */
  lookup(id: string, liveDocs: { isLive(doc: number): boolean }): number {
    if (!this.mayContain(id)) return -1;
    const target = Buffer.from(id, 'utf8');
    return this.idStarts !== null ? this.lookupDecoded(target, liveDocs) : this.lookupBlocks(target, liveDocs);
  }

  private lookupDecoded(target: Buffer, liveDocs: { isLive(doc: number): boolean }): number {
    const idBytes = this.idBytes!;
    const idStarts = this.idStarts!;
    let low = 0;
    let high = this.maxDoc;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareBytes(target, idBytes, idStarts[middle]!, idStarts[middle + 1]!) > 0) low = middle + 1;
      else high = middle;
    }
    for (let k = low; k < this.maxDoc && compareBytes(target, idBytes, idStarts[k]!, idStarts[k + 1]!) === 0; k++) {
      const doc = this.sortedDocAt(k);
      if (liveDocs.isLive(doc)) return doc;
    }
    return -1;
  }

  private lookupBlocks(target: Buffer, liveDocs: { isLive(doc: number): boolean }): number {
    const data = this.data;
    let low = 0;
    let high = this.blockOffsets!.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      let pos = this.blockStart(middle) + 1;
      let length = 0;
      let shift = 0;
      for (;;) {
        const byte = data[pos++]!;
        length += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) break;
        shift += 7;
      }
      if (compareBytes(target, data, pos, pos + length) > 0) low = middle + 1;
      else high = middle;
    }
    // Block `low` is the first whose head is not below the target: the target starts in the block before or at its head.
    // The scan compares front-coded entries without decoding them: `match` is how many leading bytes the previous
    // id (below the target, or equal to it) shares with the target.
    let k = low > 0 ? (low - 1) << ID_BLOCK_SHIFT : 0;
    let pos = 0;
    let match = 0;
    for (; k < this.maxDoc; k++) {
      if ((k & (ID_BLOCK_SIZE - 1)) === 0) {
        pos = this.blockStart(k >>> ID_BLOCK_SHIFT);
        match = 0;
      }
      let prefix = data[pos++]!;
      if (prefix >= 0x80) [prefix, pos] = readLongVarint(data, pos, prefix);
      let suffix = data[pos++]!;
      if (suffix >= 0x80) [suffix, pos] = readLongVarint(data, pos, suffix);
      const end = pos + suffix;
      if (prefix > match) {
        pos = end;
        continue;
      }
      if (prefix < match) return -1;
      let at = match;
      while (pos < end && at < target.length && data[pos] === target[at]) {
        pos++;
        at++;
      }
      if (pos < end && (at === target.length || data[pos]! > target[at]!)) return -1;
      match = at;
      pos = end;
      if (at < target.length) continue;
      const doc = this.sortedDocAt(k);
      if (liveDocs.isLive(doc)) return doc;
    }
    return -1;
  }

  /** Decodes the front-coded id at `pos` over the previous one in `scratch`; returns the position past it. */
  private decodeEntry(pos: number): number {
    const data = this.data;
    let prefix = data[pos++]!;
    if (prefix >= 0x80) [prefix, pos] = readLongVarint(data, pos, prefix);
    let suffix = data[pos++]!;
    if (suffix >= 0x80) [suffix, pos] = readLongVarint(data, pos, suffix);
    if (prefix > this.scratchLength) throw new RangeError('bad id prefix');
    const length = prefix + suffix;
    if (pos + suffix > data.length) throw new RangeError('read past end of data');
    if (length > this.scratch.length) {
      const grown = Buffer.allocUnsafe(Math.max(length, this.scratch.length * 2));
      grown.set(this.scratch.subarray(0, prefix));
      this.scratch = grown;
    }
    const scratch = this.scratch;
    for (let i = 0; i < suffix; i++) scratch[prefix + i] = data[pos + i]!;
    this.scratchLength = length;
    return pos + suffix;
  }

  private blockStart(block: number): number {
    this.scratchLength = 0;
    return this.blocksStart + this.blockOffsets![block]!;
  }

  /** Every id in sorted order, decoded once: position k spans `bytes[starts[k] .. starts[k + 1])`. */
  decodedIds(): { bytes: Buffer; starts: Uint32Array } {
    if (this.idStarts === null) this.decodeAll();
    return { bytes: this.idBytes!, starts: this.idStarts! };
  }

  /** Decodes every block once, for callers that read most ids. */
  private decodeAll(): void {
    const maxDoc = this.maxDoc;
    const idBytes = Buffer.allocUnsafe(this.totalIdBytes);
    const idStarts = new Uint32Array(maxDoc + 1);
    let pos = 0;
    for (let k = 0; k < maxDoc; k++) {
      if ((k & (ID_BLOCK_SIZE - 1)) === 0) pos = this.blockStart(k >>> ID_BLOCK_SHIFT);
      pos = this.decodeEntry(pos);
      const start = idStarts[k]!;
      const length = this.scratchLength;
      if (start + length > idBytes.length) throw new RangeError('doc meta ids exceed their recorded size');
      for (let i = 0; i < length; i++) idBytes[start + i] = this.scratch[i]!;
      idStarts[k + 1] = start + length;
    }
    this.idBytes = idBytes;
    this.idStarts = idStarts;
  }

  /** The doc at sorted position k. */
  sortedDocAt(k: number): number {
    const sortedDocs = this.sortedDocs;
    return sortedDocs !== null ? sortedDocs[k]! : packedIntAt(this.data, this.sortedDocsOffset, this.mapWidth, k);
  }

  /** The sorted position of a doc's id. */
  sortedIndexOf(doc: number): number {
    const inverse = this.sortedIndexOfDoc;
    const k = inverse !== null ? inverse[doc]! : packedIntAt(this.data, this.inverseOffset, this.mapWidth, doc);
    if (k >= this.maxDoc) throw new RangeError(`doc ${doc} maps to id ${k} of ${this.maxDoc}`);
    return k;
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
      const bytes = Buffer.from(id, 'utf8');
      hash = hashBytes(bytes, 0, bytes.length);
    }
    const step = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) | 1;
    for (let probe = 0; probe < FILTER_PROBES; probe++) {
      const bit = (hash + probe * step) & this.filterMask;
      if ((this.filter[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** The rest of a varint whose first byte (>= 0x80) was `first`: its value and the position past it. */
function readLongVarint(data: Uint8Array, pos: number, first: number): [number, number] {
  let value = first & 0x7f;
  for (let shift = 7; shift < 56; shift += 7) {
    const byte = data[pos++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, pos];
  }
  throw new RangeError('bad varint');
}

/** Byte-wise comparison of `target` with `bytes[start..end)` (negative, 0 or positive). */
function compareBytes(target: Uint8Array, bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  const common = Math.min(length, target.length);
  for (let i = 0; i < common; i++) {
    const difference = target[i]! - bytes[start + i]!;
    if (difference !== 0) return difference;
  }
  return target.length - length;
}
