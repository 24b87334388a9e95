/**
 * The read descriptors of a thread's files that no longer change (segment source stores, write-ahead
 * log files past the active one), shared by every shard the thread hosts and bounded: at most
 * `capacity` are open at once, and opening another closes the least recently used. A shard copy
 * therefore holds one descriptor of its own for good (its active log file), whatever its number of
 * segments and retained log files; everything else it reads comes through this cache.
 *
 * Reads are synchronous, so a descriptor handed to a read cannot be closed before that read ends.
 * Owners call `forget(path)` when they close a file or before it is deleted or moved, so that no
 * descriptor outlives its file's name (a later read of that path opens it afresh).
 */
import fs from 'node:fs';

/** Most and fewest descriptors one thread's cache keeps open. */
const MAX_PER_THREAD = 128;
const MIN_PER_THREAD = 16;

/**
 * Descriptors one thread keeps open for reads of unchanging files: 128, or a tenth of the
 * process's `Max open files` soft limit when that is lower (at least 16), so that the caches of a
 * main thread and its shard threads leave most of a small limit to the node's active files, its
 * epochs and its connections.
 */
export const READ_DESCRIPTORS_PER_THREAD = descriptorsPerThread();

function descriptorsPerThread(): number {
  let limits: string;
  try {
    limits = fs.readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return MAX_PER_THREAD;
  }
  const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  if (soft === undefined) return MAX_PER_THREAD;
  return Math.max(MIN_PER_THREAD, Math.min(MAX_PER_THREAD, Math.floor(Number(soft) / 10)));
}

/** A bounded, least-recently-used set of read-only descriptors keyed by file path. */
export class ReadDescriptorCache {
  /** Path → descriptor; a Map keeps insertion order, refreshed on every use, so the first entry is the oldest. */
  private readonly open = new Map<string, number>();
  private opened = 0;

  constructor(readonly capacity: number) {}

  /** Reads up to `length` bytes of `path` at `position` into `buffer` at `offset`; returns the bytes read. */
  read(path: string, buffer: Uint8Array, offset: number, length: number, position: number): number {
    return fs.readSync(this.descriptor(path), buffer, offset, length, position);
  }

  /** Size in bytes of `path`, through its cached descriptor. */
  size(path: string): number {
    return fs.fstatSync(this.descriptor(path)).size;
  }

  /** Closes the descriptor of `path` if one is open. */
  forget(path: string): void {
    const fd = this.open.get(path);
    if (fd === undefined) return;
    this.open.delete(path);
    fs.closeSync(fd);
  }

  /** Descriptors open now, and opened since the cache was made. */
  stats(): { open: number; capacity: number; opened: number } {
    return { open: this.open.size, capacity: this.capacity, opened: this.opened };
  }

  private descriptor(path: string): number {
    const cached = this.open.get(path);
    if (cached !== undefined) {
      this.open.delete(path);
      this.open.set(path, cached);
      return cached;
    }
    while (this.open.size >= this.capacity) this.forget(this.open.keys().next().value!);
    const fd = fs.openSync(path, 'r');
    this.opened += 1;
    this.open.set(path, fd);
    return fd;
  }
}

/** The cache of this thread (every worker thread loads its own copy of this module). */
export const readDescriptors = new ReadDescriptorCache(READ_DESCRIPTORS_PER_THREAD);
