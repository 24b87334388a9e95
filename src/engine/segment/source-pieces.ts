/**
 * Pieced stored sources (segment format 5, docs/formats/segment.md): a document of at least
 * PIECED_SOURCE_BYTES is stored in a block of its own, cut at top-level member boundaries into
 * pieces compressed one by one, behind an uncompressed header that lists its top-level members'
 * byte ranges and its pieces. Reading one top-level field then decompresses only the piece that
 * holds it; the whole text is assembled only when someone asks for it.
 */
import { compressSync as lz4Compress } from 'lz4-napi';
import { ByteReader, ByteSink } from './byte-io.ts';
import { corruptFile } from './segment-file.ts';
import { EngineError } from '../errors.ts';
import { topLevelLayout, type TopLevelEntry } from '../update/source-splice.ts';

/** Sources this long or longer are pieced. */
export const PIECED_SOURCE_BYTES = 16 * 1024;

/**
 * Largest piece of grouped members, as large as a block of small docs: reading a small field of a
 * large doc decompresses no more than reading a small doc does. A longer member is a piece alone.
 */
export const PIECE_BYTES = 16 * 1024;

/** The decoded header of a pieced block. */
export interface PiecedHeader {
  /** Length of the document's text. */
  textBytes: number;
  /** The top-level members, in order, offsets into the whole text. */
  entries: TopLevelEntry[];
  /** Start of each piece in the text, plus the text's length. */
  pieceStarts: number[];
  /** Start of each piece's compressed bytes from the block's start (after the header), plus the block's end. */
  compressedStarts: number[];
}

/** A pieced block ready to write: its header and the compressed pieces. */
export interface EncodedPieces {
  header: Uint8Array;
  pieces: Buffer[];
}

/**
 * Cuts a source into pieces and compresses them; null when the text is not a JSON object (it is
 * then stored in an ordinary block).
 */
export function encodePieces(source: Buffer): EncodedPieces | null {
  let entries: TopLevelEntry[];
  try {
    entries = topLevelLayout(source).entries;
  } catch (error) {
    if (error instanceof EngineError) return null;
    throw error;
  }
  const cuts = pieceCuts(entries, source.length);
  const pieces: Buffer[] = [];
  for (let piece = 0; piece + 1 < cuts.length; piece++) pieces.push(lz4Compress(source.subarray(cuts[piece]!, cuts[piece + 1]!)));
  const sink = new ByteSink(1024);
  sink.writeVarint(source.length);
  sink.writeVarint(entries.length);
  let previousEnd = 0;
  for (const entry of entries) {
    sink.writeString(entry.key);
    sink.writeVarint(entry.keyStart - previousEnd);
    sink.writeVarint(entry.valueStart - entry.keyStart);
    sink.writeVarint(entry.valueEnd - entry.valueStart);
    previousEnd = entry.valueEnd;
  }
  sink.writeVarint(pieces.length);
  pieces.forEach((piece, index) => {
    sink.writeVarint(cuts[index + 1]! - cuts[index]!);
    sink.writeVarint(piece.length);
  });
  return { header: sink.toBytes(), pieces };
}

/**
 * Where a text is cut (offsets, from 0 to its length): before a member that would take the piece
 * it joins past PIECE_BYTES, and after a member longer than that. Every member lies inside one piece.
 */
export function pieceCuts(entries: readonly TopLevelEntry[], textBytes: number): number[] {
  const cuts = [0];
  for (const entry of entries) {
    const last = cuts[cuts.length - 1]!;
    if (entry.valueEnd - last > PIECE_BYTES && entry.keyStart > last) cuts.push(entry.keyStart);
    if (entry.valueEnd - entry.keyStart > PIECE_BYTES) cuts.push(entry.valueEnd);
  }
  if (cuts[cuts.length - 1]! < textBytes) cuts.push(textBytes);
  return cuts;
}

/** Decodes and checks the header of pieced block `block` of `blockBytes` compressed bytes (header included). */
export function decodePiecedHeader(path: string, block: number, header: Uint8Array, blockBytes: number): PiecedHeader {
  const bad = (reason: string): EngineError => corruptFile(path, `source block ${block} has a bad piece header (${reason})`);
  try {
    const reader = new ByteReader(header);
    const textBytes = reader.readVarint();
    const entryCount = reader.readVarint();
    if (entryCount > header.length) throw bad('member count');
    const entries: TopLevelEntry[] = [];
    let previousEnd = 0;
    for (let index = 0; index < entryCount; index++) {
      const key = reader.readString();
      const keyStart = previousEnd + reader.readVarint();
      const valueStart = keyStart + reader.readVarint();
      const valueEnd = valueStart + reader.readVarint();
      if (valueStart <= keyStart || valueEnd <= valueStart || valueEnd > textBytes) throw bad(`member ${key} out of range`);
      entries.push({ key, keyStart, valueStart, valueEnd });
      previousEnd = valueEnd;
    }
    const pieceCount = reader.readVarint();
    if (pieceCount > header.length) throw bad('piece count');
    const pieceStarts = [0];
    const compressedStarts = [header.length];
    for (let piece = 0; piece < pieceCount; piece++) {
      const raw = reader.readVarint();
      const compressed = reader.readVarint();
      if (raw === 0 || compressed === 0) throw bad(`empty piece ${piece}`);
      pieceStarts.push(pieceStarts[piece]! + raw);
      compressedStarts.push(compressedStarts[piece]! + compressed);
    }
    if (reader.pos !== header.length) throw bad('trailing bytes');
    if (pieceStarts[pieceCount] !== textBytes) throw bad('pieces do not add up to the text');
    if (compressedStarts[pieceCount] !== blockBytes) throw bad('pieces do not add up to the block');
    const decoded = { textBytes, entries, pieceStarts, compressedStarts };
    for (const entry of entries) {
      const piece = pieceAt(decoded, entry.keyStart);
      if (entry.valueEnd > pieceStarts[piece + 1]!) throw bad(`member ${entry.key} spans pieces`);
    }
    return decoded;
  } catch (error) {
    if (error instanceof RangeError) throw bad(error.message);
    throw error;
  }
}

/** The piece holding text offset `offset`. */
export function pieceAt(header: PiecedHeader, offset: number): number {
  const starts = header.pieceStarts;
  let low = 0;
  let high = starts.length - 2;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (starts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}
