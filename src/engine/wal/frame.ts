/**
 * One write-ahead log frame: `[u32 bodyLength][u32 crc32c(body)][body]`, where
 * body = `[u64 seq][u64 timestamp][payload]`, all little-endian (docs/formats/wal.md).
 */
import { crc32c } from '../directory/checksum.ts';

/** Bytes before a frame's body: the body length and the body's CRC32C. */
export const FRAME_HEADER_BYTES = 8;

/** Bytes of a body before its payload: seq and timestamp. */
export const BODY_PREFIX_BYTES = 16;

/** Bytes a frame adds around its payload. */
export const FRAME_OVERHEAD_BYTES = FRAME_HEADER_BYTES + BODY_PREFIX_BYTES;

/** Largest payload one record may carry; longer lengths read from disk mean corruption. */
export const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

/** `checkFrame` result: the frame does not fit in the bytes available (torn, or read more). */
export const FRAME_TORN = -1;

/** `checkFrame` result: the frame is complete but its length or checksum is invalid. */
export const FRAME_CORRUPT = -2;

const TWO_POW_32 = 0x1_0000_0000;

/** Writes a non-negative safe integer as an unsigned 64-bit little-endian value. */
export function writeUint64(target: Buffer, offset: number, value: number): void {
  target.writeUInt32LE(value % TWO_POW_32, offset);
  target.writeUInt32LE(Math.floor(value / TWO_POW_32), offset + 4);
}

/** Reads an unsigned 64-bit little-endian value (exact up to 2^53). */
export function readUint64(source: Buffer, offset: number): number {
  return source.readUInt32LE(offset) + source.readUInt32LE(offset + 4) * TWO_POW_32;
}

/** Encodes one frame into `target` at `offset` and returns the offset just past it. */
export function writeFrame(
  target: Buffer,
  offset: number,
  seq: number,
  timestamp: number,
  payload: Uint8Array,
): number {
  const bodyStart = offset + FRAME_HEADER_BYTES;
  const bodyEnd = bodyStart + BODY_PREFIX_BYTES + payload.length;
  target.writeUInt32LE(BODY_PREFIX_BYTES + payload.length, offset);
  writeUint64(target, bodyStart, seq);
  writeUint64(target, bodyStart + 8, timestamp);
  target.set(payload, bodyStart + BODY_PREFIX_BYTES);
  target.writeUInt32LE(crc32c(target.subarray(bodyStart, bodyEnd)), offset + 4);
  return bodyEnd;
}

/**
 * Checks the frame starting at `offset` in `source`, looking no further than `end`.
 * Returns the frame's total length, `FRAME_TORN` when it runs past `end`, or `FRAME_CORRUPT`
 * when its length is impossible or (with `verifyChecksum`) its CRC32C does not match.
 */
export function checkFrame(source: Buffer, offset: number, end: number, verifyChecksum: boolean): number {
  if (end - offset < FRAME_HEADER_BYTES) return FRAME_TORN;
  const bodyLength = source.readUInt32LE(offset);
  if (bodyLength < BODY_PREFIX_BYTES || bodyLength > BODY_PREFIX_BYTES + MAX_PAYLOAD_BYTES) {
    return FRAME_CORRUPT;
  }
  const total = FRAME_HEADER_BYTES + bodyLength;
  if (end - offset < total) return FRAME_TORN;
  if (verifyChecksum) {
    const bodyStart = offset + FRAME_HEADER_BYTES;
    const actual = crc32c(source.subarray(bodyStart, bodyStart + bodyLength));
    if (actual !== source.readUInt32LE(offset + 4)) return FRAME_CORRUPT;
  }
  return total;
}

/** Total length (header included) a frame declares, read from its first four bytes. */
export function declaredFrameLength(source: Buffer, offset: number): number {
  return FRAME_HEADER_BYTES + source.readUInt32LE(offset);
}

/** The seq of the frame at `offset` (the frame must have been checked). */
export function frameSeq(source: Buffer, offset: number): number {
  return readUint64(source, offset + FRAME_HEADER_BYTES);
}

/** The append timestamp (epoch ms) of the frame at `offset`. */
export function frameTimestamp(source: Buffer, offset: number): number {
  return readUint64(source, offset + FRAME_HEADER_BYTES + 8);
}

/** The payload of the frame at `offset` whose total length is `total`, sharing `source`'s memory. */
export function framePayload(source: Buffer, offset: number, total: number): Buffer {
  return source.subarray(offset + FRAME_OVERHEAD_BYTES, offset + total);
}
