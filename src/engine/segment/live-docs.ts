/**
 * Live docs of a segment: a bitset (bit set = live) persisted as generation files `live.<gen>`.
 * Generation 0 is written with the segment only when some kept doc was already deleted; a
 * missing `live.0` means every doc is live.
 */
import fs from 'node:fs';
import { ByteReader } from './byte-io.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, corruptFile, readVerifiedFile, writeSmallFile, type FileChecksum } from './segment-file.ts';

/** File name of a live-docs generation. */
export function liveDocsFileName(generation: number): string {
  return `live.${generation}`;
}

/** Deletion state of a segment's docs. */
export class LiveDocs {
  private constructor(
    readonly bits: Uint8Array,
    readonly maxDoc: number,
    private live: number,
  ) {}

  /** All docs live. */
  static allLive(maxDoc: number): LiveDocs {
    const bits = new Uint8Array(Math.ceil(maxDoc / 8)).fill(0xff);
    if (maxDoc % 8 !== 0) bits[bits.length - 1] = (1 << (maxDoc % 8)) - 1;
    return new LiveDocs(bits, maxDoc, maxDoc);
  }

  /** Wraps a bitset (taken over, not copied) and counts its live docs. */
  static fromBits(bits: Uint8Array, maxDoc: number): LiveDocs {
    let live = 0;
    for (let doc = 0; doc < maxDoc; doc++) live += (bits[doc >>> 3]! >>> (doc & 7)) & 1;
    return new LiveDocs(bits, maxDoc, live);
  }

  /** Number of live docs. */
  get liveCount(): number {
    return this.live;
  }

  /** Whether the doc is live. */
  isLive(doc: number): boolean {
    return doc >= 0 && doc < this.maxDoc && ((this.bits[doc >>> 3]! >>> (doc & 7)) & 1) === 1;
  }

  /** Marks a doc deleted; false when it already was. */
  delete(doc: number): boolean {
    if (!this.isLive(doc)) return false;
    this.bits[doc >>> 3] = this.bits[doc >>> 3]! & ~(1 << (doc & 7));
    this.live--;
    return true;
  }
}

/** Writes a live-docs generation file durably (the caller fsyncs the directory). */
export function writeLiveDocsFile(path: string, bits: Uint8Array, maxDoc: number): Promise<FileChecksum> {
  return writeSmallFile(path, FileMagic.liveDocs, (sink) => {
    sink.writeVarint(maxDoc);
    sink.writeBytes(bits);
  });
}

/** Loads a live-docs generation; a missing generation 0 means all live. */
export function readLiveDocsFile(path: string, generation: number, maxDoc: number): LiveDocs {
  if (generation === 0 && !fs.existsSync(path)) return LiveDocs.allLive(maxDoc);
  const data = readVerifiedFile(path, FileMagic.liveDocs);
  const reader = new ByteReader(data, HEADER_BYTES);
  const storedMaxDoc = reader.readVarint();
  const byteCount = Math.ceil(maxDoc / 8);
  if (storedMaxDoc !== maxDoc || reader.pos + byteCount + FOOTER_BYTES !== data.length) {
    throw corruptFile(path, `live docs hold ${storedMaxDoc} docs, segment has ${maxDoc}`);
  }
  return LiveDocs.fromBits(reader.readBytes(byteCount).slice(), maxDoc);
}
