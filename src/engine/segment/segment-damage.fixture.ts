/** Test helper: damages a segment file while keeping its checksums valid, so that only decoding can notice. */
import fs from 'node:fs';
import path from 'node:path';
import { crc32c } from '../directory/checksum.ts';
import { FOOTER_BYTES, HEADER_BYTES, PAGE_TABLE_TRAILER_BYTES, PAGED_FORMAT_VERSION, pageTableOf } from './segment-file.ts';
import type { SegmentMeta } from './segment-writer.ts';

/** Rewrites one file of a segment through `damage` with a valid checksum (and page table); returns the meta recording it. */
export function damageWithValidChecksum(segmentDir: string, meta: SegmentMeta, file: string, damage: (body: Buffer) => Buffer): SegmentMeta {
  const filePath = path.join(segmentDir, file);
  const original = fs.readFileSync(filePath);
  // Paged files (format 6) end with a page checksum table, rebuilt for the damaged body.
  const paged = original.readUInt32LE(4) >= PAGED_FORMAT_VERSION;
  const tableBytes = paged ? original.readUInt32LE(original.length - FOOTER_BYTES - 8) * 4 + PAGE_TABLE_TRAILER_BYTES : 0;
  const body = damage(Buffer.from(original.subarray(HEADER_BYTES, original.length - FOOTER_BYTES - tableBytes)));
  const content = Buffer.concat([original.subarray(0, HEADER_BYTES), body]);
  const rewritten = Buffer.concat([content, paged ? pageTableOf(content) : Buffer.alloc(0), Buffer.alloc(FOOTER_BYTES)]);
  const crc = crc32c(rewritten.subarray(0, rewritten.length - FOOTER_BYTES));
  rewritten.writeUInt32LE(crc, rewritten.length - FOOTER_BYTES);
  fs.writeFileSync(filePath, rewritten);
  return { ...meta, files: { ...meta.files, [file]: { bytes: rewritten.length, crc32c: crc } } };
}
