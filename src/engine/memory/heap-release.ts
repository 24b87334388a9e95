/**
 * Returns the C heap's free pages to the operating system after the engine drops a large working
 * set (a frozen in-memory layer once its epoch is written, a merge's buffers).
 *
 * Array buffers live on the C heap. glibc raises its mmap threshold each time a large mapped block
 * is freed, so the engine's buffers soon come from the heap arenas, and pages freed between live
 * blocks stay with the process: resident memory kept the peak of indexing long after the buffers
 * were gone. `malloc_trim(0)` hands those pages back. The buffers are freed by V8's collector, not
 * when the engine drops them, and not all at the first collection after (backing stores are swept
 * on a background thread, and some buffers become garbage only later), so a release request trims
 * after every major collection of its thread for `RELEASE_WINDOW_MS`; requests in that time extend
 * it. Where glibc is not the C library, or the FFI module cannot load, requests do nothing.
 */
import { createRequire } from 'node:module';
import { PerformanceObserver, constants, type NodeGCPerformanceDetail, type PerformanceEntry } from 'node:perf_hooks';

interface Koffi {
  load(library: string): { func(signature: string): (pad: number) => number };
}

/** Trims done by this thread and the time they took. */
export interface HeapReleaseStats {
  trims: number;
  trimMs: number;
}

/** How long after a release request major collections are followed by a trim. */
export const RELEASE_WINDOW_MS = 1000;

const stats: HeapReleaseStats = { trims: 0, trimMs: 0 };
let trim: ((pad: number) => number) | null | undefined;
/** performance.now() until which major collections are followed by a trim. */
let windowEnd = 0;
let observer: PerformanceObserver | null = null;

function loadTrim(): ((pad: number) => number) | null {
  if (trim !== undefined) return trim;
  trim = null;
  if (process.platform !== 'linux') return trim;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    trim = koffi.load('libc.so.6').func('int malloc_trim(size_t)');
  } catch {
    trim = null;
  }
  return trim;
}

function onMajorCollection(): void {
  const now = performance.now();
  if (now > windowEnd) {
    observer?.disconnect();
    observer = null;
    return;
  }
  try {
    trim!(0);
  } catch {
    trim = null;
    observer?.disconnect();
    observer = null;
    return;
  }
  stats.trims++;
  stats.trimMs += performance.now() - now;
}

function gcKind(entry: PerformanceEntry): number | undefined {
  return (entry as { detail?: NodeGCPerformanceDetail }).detail?.kind;
}

/** Asks for the heap's free pages to be returned after the major collections of the next `RELEASE_WINDOW_MS`. */
export function releaseFreedMemorySoon(): void {
  if (loadTrim() === null) return;
  windowEnd = performance.now() + RELEASE_WINDOW_MS;
  if (observer !== null) return;
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (gcKind(entry) === constants.NODE_PERFORMANCE_GC_MAJOR) {
        onMajorCollection();
        return;
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** Trims done by this thread so far. */
export function heapReleaseStats(): HeapReleaseStats {
  return { ...stats };
}
