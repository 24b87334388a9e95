/**
 * Stored sources of the mutable layer, copied back to back into chunks the layer owns. A source
 * handed in is often a view of a larger buffer (a bulk request's body, a pooled slab shared with
 * short-lived data), which it would otherwise keep alive; copied here, the layer holds exactly its
 * own bytes, and its memory can be counted for the epoch size threshold.
 */

/** Bytes per chunk. */
const CHUNK_BYTES = 1 << 20;
/** Sources longer than this get a buffer of their own instead of a chunk's tail. */
const LARGE_BYTES = CHUNK_BYTES >> 2;

/** Append-only byte chunks; see the module comment. */
export class ByteArena {
  private chunk: Buffer | null = null;
  private used = 0;
  /** Bytes of every chunk and large buffer allocated so far. */
  allocatedBytes = 0;

  /** Copies `bytes` into the arena and returns a view of the copy. */
  copy(bytes: Uint8Array): Buffer {
    const length = bytes.length;
    if (length > LARGE_BYTES) {
      const own = Buffer.allocUnsafeSlow(length);
      own.set(bytes);
      this.allocatedBytes += length;
      return own;
    }
    if (this.chunk === null || this.used + length > CHUNK_BYTES) {
      this.chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      this.used = 0;
      this.allocatedBytes += CHUNK_BYTES;
    }
    const start = this.used;
    this.chunk.set(bytes, start);
    this.used += length;
    return this.chunk.subarray(start, start + length);
  }
}
