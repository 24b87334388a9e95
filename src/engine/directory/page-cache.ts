/**
 * The pages of a thread's paged segment files (term dictionaries, postings, stored sources) that
 * were read and verified, shared by every segment the thread hosts and bounded by bytes: adding a
 * page beyond `capacityBytes` drops the least recently used ones. Each worker thread loads its own
 * copy of this module, so every thread has its own cache and bound; resident memory for postings is
 * then this bound per thread, whatever the size of the collection (the operating system's page
 * cache keeps recently read file pages below it).
 *
 * A file finds its own pages by index (`PageOwner` keeps an array of its `CachedPage`s); the cache
 * only orders all pages by use, in a doubly linked list, so that a hit costs a few pointer moves
 * and no hashing. Evicting a page tells its owner to forget it.
 */

/** Bytes of verified pages one thread keeps (pages of every segment's paged files). */
export const PAGE_CACHE_BYTES_PER_THREAD = 32 * 1024 * 1024;

/** A file whose pages the cache holds: told when one is evicted. */
export interface PageOwner {
  /** The cache dropped page `index` of this file. */
  evicted(index: number): void;
}

/** One cached page, linked in use order (most recent first). */
export interface CachedPage {
  readonly bytes: Uint8Array;
  readonly owner: PageOwner;
  readonly index: number;
  /** Neighbours in use order; null at the ends. */
  newer: CachedPage | null;
  older: CachedPage | null;
  /** False once evicted or removed. */
  cached: boolean;
}

/** A bounded least-recently-used set of pages, sized by the pages' lengths. */
export class PageCache {
  private newest: CachedPage | null = null;
  private oldest: CachedPage | null = null;
  private pages = 0;
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(private capacity: number) {}

  /** Marks a cached page as just used (a hit). */
  touch(page: CachedPage): void {
    this.hits++;
    if (page === this.newest) return;
    this.unlink(page);
    this.linkNewest(page);
  }

  /** Adds page `index` of `owner` (a miss), dropping the least recently used pages while the cache holds more than its capacity. */
  add(owner: PageOwner, index: number, bytes: Uint8Array): CachedPage {
    this.misses++;
    const page: CachedPage = { bytes, owner, index, newer: null, older: null, cached: true };
    this.linkNewest(page);
    this.pages++;
    this.bytes += bytes.length;
    this.evict();
    return page;
  }

  /** Removes a page (its file closed); nothing when it is no longer cached. */
  remove(page: CachedPage): void {
    if (!page.cached) return;
    this.unlink(page);
    page.cached = false;
    this.pages--;
    this.bytes -= page.bytes.length;
  }

  /** Changes the capacity (tests, or a node that wants a different bound) and evicts down to it. */
  resize(capacityBytes: number): void {
    this.capacity = capacityBytes;
    this.evict();
  }

  /** Pages and bytes held now, the bound, and hits, misses and evictions since the cache was made. */
  stats(): { pages: number; bytes: number; capacityBytes: number; hits: number; misses: number; evictions: number } {
    return { pages: this.pages, bytes: this.bytes, capacityBytes: this.capacity, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }

  private evict(): void {
    while (this.bytes > this.capacity && this.oldest !== null) {
      const page = this.oldest;
      this.remove(page);
      this.evictions++;
      page.owner.evicted(page.index);
    }
  }

  private linkNewest(page: CachedPage): void {
    page.older = this.newest;
    page.newer = null;
    if (this.newest !== null) this.newest.newer = page;
    this.newest = page;
    if (this.oldest === null) this.oldest = page;
  }

  private unlink(page: CachedPage): void {
    if (page.newer !== null) page.newer.older = page.older;
    else this.newest = page.older;
    if (page.older !== null) page.older.newer = page.newer;
    else this.oldest = page.newer;
    page.newer = null;
    page.older = null;
  }
}

/** The cache of this thread (every worker thread loads its own copy of this module). */
export const pageCache = new PageCache(PAGE_CACHE_BYTES_PER_THREAD);
