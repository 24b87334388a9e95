/**
 * The pages of a thread's paged segment files (term dictionaries and postings) that were read
 * and verified, shared by every segment the thread hosts and bounded by bytes: adding a page
 * beyond `capacityBytes` drops the least recently used ones. Each worker thread loads its own copy
 * of this module, so every thread has its own cache and bound; resident memory for postings is then
 * this bound per thread, whatever the size of the collection (the operating system's page cache
 * keeps recently read file pages below it).
 *
 * Keys are numbers: a file's id (`newFileId`, one per opened file) times `PAGES_PER_FILE` plus the
 * page's index, so a reopened or replaced file never sees the pages of an earlier one.
 */

/** Bytes of verified pages one thread keeps (term dictionary and postings pages of every segment). */
export const PAGE_CACHE_BYTES_PER_THREAD = 32 * 1024 * 1024;

/** Most pages of one file (keys stay exact doubles: ids up to 2^27 times 2^26 pages). */
export const PAGES_PER_FILE = 2 ** 26;

let nextFileId = 1;

/** A fresh id for an opened file, the high part of its pages' keys. */
export function newFileId(): number {
  return nextFileId++;
}

/** A bounded least-recently-used map of page key → page bytes, sized by the pages' lengths. */
export class PageCache {
  /** Key → page; a Map keeps insertion order, refreshed on every hit, so the first entry is the oldest. */
  private readonly pages = new Map<number, Uint8Array>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(private capacity: number) {}

  /** The cached page under `key` (now the most recently used), or undefined (counted as a miss). */
  get(key: number): Uint8Array | undefined {
    const page = this.pages.get(key);
    if (page === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.pages.delete(key);
    this.pages.set(key, page);
    return page;
  }

  /** Adds a page, dropping the least recently used pages while the cache holds more than its capacity. */
  set(key: number, page: Uint8Array): void {
    const previous = this.pages.get(key);
    if (previous !== undefined) {
      this.pages.delete(key);
      this.bytes -= previous.length;
    }
    this.pages.set(key, page);
    this.bytes += page.length;
    this.evict();
  }

  /** Drops every page of the file with id `fileId` (when the file is closed). */
  dropFile(fileId: number): void {
    const low = fileId * PAGES_PER_FILE;
    const high = low + PAGES_PER_FILE;
    for (const [key, page] of this.pages) {
      if (key < low || key >= high) continue;
      this.pages.delete(key);
      this.bytes -= page.length;
    }
  }

  /** Changes the capacity (tests, or a node that wants a different bound) and evicts down to it. */
  resize(capacityBytes: number): void {
    this.capacity = capacityBytes;
    this.evict();
  }

  /** Pages and bytes held now, the bound, and hits, misses and evictions since the cache was made. */
  stats(): { pages: number; bytes: number; capacityBytes: number; hits: number; misses: number; evictions: number } {
    return { pages: this.pages.size, bytes: this.bytes, capacityBytes: this.capacity, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }

  private evict(): void {
    while (this.bytes > this.capacity && this.pages.size > 0) {
      const [key, page] = this.pages.entries().next().value!;
      this.pages.delete(key);
      this.bytes -= page.length;
      this.evictions++;
    }
  }
}

/** The cache of this thread (every worker thread loads its own copy of this module). */
export const pageCache = new PageCache(PAGE_CACHE_BYTES_PER_THREAD);
