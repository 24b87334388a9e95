/**
 * Checks of a postings block's encoded positions before a merge copies them as they are: each
 * doc's bytes must hold exactly its freq delta varints, and the docs' bytes must fill the block's.
 */
import { corruptFile } from './segment-file.ts';

/** A block's positions: bytes `[start, end)` of `data`, then its docs, their freqs and how many. */
export interface EncodedPositions {
  /** The postings.pos file, named by errors. */
  path: string;
  block: number;
  data: Uint8Array;
  start: number;
  end: number;
  docs: Int32Array;
  freqs: Int32Array;
  count: number;
}

/** Checks each doc's byte length (format 4 on, from the block) against its freq varints and the block's bytes. */
export function checkPositionLengths(positions: EncodedPositions, lengths: Int32Array): void {
  const { path, block, data, end, docs, freqs, count } = positions;
  let pointer = positions.start;
  const wordsUpTo = data.length - 4;
  for (let i = 0; i < count; i++) {
    const length = lengths[i]!;
    const docEnd = pointer + length;
    if (docEnd > end) throw corruptFile(path, `position lengths of block ${block} run past its positions`);
    // A varint ends at each byte below 0x80: count the others, and read the doc's last byte.
    let continued = 0;
    let last: number;
    if (length <= 4 && length > 0 && pointer <= wordsUpTo) {
      // Most docs take a few bytes: read them as one word, without a loop, and add up their top bits.
      const word = (data[pointer]! | (data[pointer + 1]! << 8) | (data[pointer + 2]! << 16) | (data[pointer + 3]! << 24)) & (-1 >>> (32 - 8 * length));
      continued = Math.imul((word >>> 7) & 0x01010101, 0x01010101) >>> 24;
      last = word >>> (8 * length - 8);
      pointer = docEnd;
    } else {
      for (; pointer < docEnd; pointer++) continued += data[pointer]! >>> 7;
      last = data[docEnd - 1]!;
    }
    if (length - continued !== freqs[i] || last >= 0x80) {
      throw corruptFile(path, `positions of doc ${docs[i]} in block ${block} do not match its freq`);
    }
  }
  if (pointer !== end) throw corruptFile(path, `position lengths of block ${block} do not cover its positions`);
}

/** Finds each doc's byte length by counting its freq varints (singletons, formats before 4) into `lengths`. */
export function measurePositionLengths(positions: EncodedPositions, lengths: Int32Array): void {
  const { path, block, data, end, docs, freqs, count } = positions;
  let pointer = positions.start;
  for (let i = 0; i < count; i++) {
    const start = pointer;
    let remaining = freqs[i]!;
    while (remaining > 0 && pointer < end) if (data[pointer++]! < 0x80) remaining--;
    if (remaining > 0) throw corruptFile(path, `positions of block ${block} end before those of doc ${docs[i]}`);
    lengths[i] = pointer - start;
  }
  if (pointer !== end) throw corruptFile(path, `positions of block ${block} run past its docs' freqs`);
}
