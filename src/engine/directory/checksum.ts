/**
 * CRC32C (Castagnoli), the checksum of every WAL frame, segment file, manifest and change-feed
 * cursor. Large inputs go to the SIMD implementation of `@node-rs/crc32` (gigabytes per second,
 * but a fixed cost per native call); inputs below `NATIVE_FROM_BYTES` are cheaper in `crc-32`'s
 * table-driven JavaScript. Both compute the same function, so the split is invisible on disk.
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import tableCrc32c from 'crc-32/crc32c.js';

/** Input length from which the native call pays for itself (measured: about 200 bytes). */
const NATIVE_FROM_BYTES = 256;

/** CRC32C of `bytes` as an unsigned 32-bit number, continuing `previous` (the CRC of the bytes before). */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  if (bytes.length >= NATIVE_FROM_BYTES) {
    return nativeCrc32c(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), previous);
  }
  return tableCrc32c.buf(bytes, previous | 0) >>> 0;
}
