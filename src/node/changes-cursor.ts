/**
 * The change-feed cursor: an opaque string carrying, for every shard of a collection, the seq of
 * the last change the consumer has seen. Text form `<sum>-<base64url payload>`, where `<sum>` is
 * the total of the seqs (a rough progress figure, as CouchDB's leading number) and the payload is
 *
 *   version (1 byte) | shard-set fingerprint (uint32 LE) | shard count (varint)
 *   | one seq per shard (varint) | CRC32C of everything before (uint32 LE)
 *
 * The fingerprint is a CRC32C over the collection's shard UUIDs, which are fixed for life, so a
 * cursor of another (or a re-created) collection is recognised. The text never contains `,` or
 * `}`: CouchDB clients find `last_seq` in a streamed body with a pattern that stops at either.
 */
import { crc32c } from '../engine/directory/checksum.ts';
import { NodeError } from './node-error.ts';

/** Version of the payload layout written in every cursor. */
export const CURSOR_VERSION = 1;

const CHECKSUM_BYTES = 4;
const TEXT_PATTERN = /^(\d{1,16})-([A-Za-z0-9_-]+)$/;

/** Fingerprint of a collection's shard set (its shard UUIDs in shard order). */
export function shardSetFingerprint(shardUuids: readonly string[]): number {
  return crc32c(Buffer.from(shardUuids.join(',')));
}

/** Reused for encoding: a cursor is encoded for every result of a feed. */
let scratch = Buffer.alloc(256);

/** Encodes per-shard positions (seq of the last change seen, 0 = none) as cursor text. */
export function encodeCursor(fingerprint: number, positions: ArrayLike<number>): string {
  const worstCase = 1 + 4 + 8 + positions.length * 8 + CHECKSUM_BYTES;
  if (scratch.length < worstCase) scratch = Buffer.alloc(worstCase * 2);
  scratch[0] = CURSOR_VERSION;
  scratch.writeUInt32LE(fingerprint >>> 0, 1);
  let offset = writeVarint(scratch, 5, positions.length);
  let sum = 0;
  for (let shard = 0; shard < positions.length; shard++) {
    const seq = positions[shard]!;
    offset = writeVarint(scratch, offset, seq);
    sum += seq;
  }
  scratch.writeUInt32LE(crc32c(scratch.subarray(0, offset)), offset);
  return `${sum}-${scratch.toString('base64url', 0, offset + CHECKSUM_BYTES)}`;
}

/**
 * Decodes cursor text issued for the collection with this fingerprint and shard count; returns
 * the per-shard positions. Throws `invalid_cursor` naming what is wrong with it.
 */
export function decodeCursor(text: string, fingerprint: number, shardCount: number): number[] {
  const match = TEXT_PATTERN.exec(text);
  if (!match) throw invalidCursor(text, 'it is not a change-feed cursor (expected a seq or last_seq returned by _changes, `now` or `0`)');
  const bytes = Buffer.from(match[2]!, 'base64url');
  if (bytes.length < 1 + 4 + 1 + CHECKSUM_BYTES) throw invalidCursor(text, 'it is truncated');
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  if (crc32c(body) !== bytes.readUInt32LE(body.length)) throw invalidCursor(text, 'its checksum does not match (it was altered or truncated)');
  if (body[0] !== CURSOR_VERSION) throw invalidCursor(text, `it has format version ${body[0]}, this node reads version ${CURSOR_VERSION}`);
  if (body.readUInt32LE(1) !== fingerprint) {
    throw invalidCursor(text, 'it was issued for another collection (or for an earlier collection of the same name)');
  }
  const reader = { bytes: body, offset: 5 };
  const count = readVarint(reader, text);
  if (count !== shardCount) throw invalidCursor(text, `it covers ${count} shards, the collection has ${shardCount}`);
  const positions: number[] = [];
  let sum = 0;
  for (let shard = 0; shard < count; shard++) {
    const seq = readVarint(reader, text);
    positions.push(seq);
    sum += seq;
  }
  if (reader.offset !== body.length) throw invalidCursor(text, 'it has trailing bytes');
  if (String(sum) !== match[1]) throw invalidCursor(text, 'its leading number does not match its positions');
  return positions;
}

function invalidCursor(text: string, problem: string): NodeError {
  const shown = text.length > 80 ? `${text.slice(0, 80)}...` : text;
  return new NodeError('invalid_cursor', `invalid change-feed cursor [${shown}]: ${problem}`);
}

/** Writes the LEB128 of a non-negative safe integer (arithmetic, not bit operations: seqs pass 2^32). */
function writeVarint(target: Buffer, offset: number, value: number): number {
  let rest = value;
  let position = offset;
  while (rest >= 0x80) {
    target[position++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  target[position++] = rest;
  return position;
}

function readVarint(reader: { bytes: Buffer; offset: number }, text: string): number {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (reader.offset >= reader.bytes.length) throw invalidCursor(text, 'it is truncated');
    const byte = reader.bytes[reader.offset++]!;
    value += (byte & 0x7f) * scale;
    if (!Number.isSafeInteger(value)) throw invalidCursor(text, 'it holds a number out of range');
    if (byte < 0x80) return value;
    scale *= 0x80;
  }
}
