/**
 * Decoded skip data of long postings lists, kept across cursors by each thread: a cursor over a
 * term of many blocks decodes every block's skip entry when it is created, which for the commonest
 * terms costs tens of microseconds a query, while segments never change once written. Entries are
 * found by file and offset and dropped least recently used first beyond a byte bound; a closed
 * segment's entries are no longer found (a new segment has new file objects) and leave in use order.
 */

/** Bytes of decoded skip data one thread keeps. */
export const SKIP_CACHE_BYTES_PER_THREAD = 4 * 1024 * 1024;

interface Entry<T> {
  readonly owner: Map<number, Entry<T>>;
  readonly offset: number;
  readonly value: T;
  readonly bytes: number;
}

/** A byte-bounded least-recently-used map from (file object, offset) to decoded values. */
export class SkipCache<T> {
  private readonly byFile = new WeakMap<object, Map<number, Entry<T>>>();
  /** Every entry, least recently used first (a Map keeps insertion order). */
  private readonly byUse = new Map<Entry<T>, true>();
  private bytes = 0;

  constructor(private readonly capacity: number) {}

  /** The value kept for `offset` of `file`, marked as just used; undefined when none is. */
  get(file: object, offset: number): T | undefined {
    const entry = this.byFile.get(file)?.get(offset);
    if (entry === undefined) return undefined;
    this.byUse.delete(entry);
    this.byUse.set(entry, true);
    return entry.value;
  }

  /** Keeps `value` (of about `bytes` bytes) for `offset` of `file`, dropping the least recently used values beyond the bound. */
  set(file: object, offset: number, value: T, bytes: number): void {
    if (bytes > this.capacity) return;
    let owner = this.byFile.get(file);
    if (owner === undefined) this.byFile.set(file, (owner = new Map()));
    const previous = owner.get(offset);
    if (previous !== undefined) this.remove(previous);
    const entry: Entry<T> = { owner, offset, value, bytes };
    owner.set(offset, entry);
    this.byUse.set(entry, true);
    this.bytes += bytes;
    while (this.bytes > this.capacity) this.remove(this.byUse.keys().next().value!);
  }

  /** Bytes of the values kept. */
  get size(): number {
    return this.bytes;
  }

  private remove(entry: Entry<T>): void {
    this.byUse.delete(entry);
    entry.owner.delete(entry.offset);
    this.bytes -= entry.bytes;
  }
}
