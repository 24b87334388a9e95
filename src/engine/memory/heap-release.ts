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
 * it, and so does a window in which a major collection came (the thread is still busy), up to
 * `RELEASE_WINDOWS` in a row. A thread that goes quiet may run no major collection for minutes,
 * and the buffers it dropped last would stay resident all that time: when a window ends without
 * one, or the last window ends, the thread runs one itself and trims after it. Work that drops
 * large buffers many times a second (bulk requests in the HTTP thread) asks for the quiet path
 * only: one collection and trim once no request has come for `RELEASE_WINDOW_MS`, none while
 * they come (trimming a busy thread hands back pages its next requests fault in again). Where
 * glibc is not the C library, or the FFI module cannot load, requests do nothing.
 */
import { createRequire } from 'node:module';
import { PerformanceObserver, constants, type NodeGCPerformanceDetail, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

interface Koffi {
  load(library: string): { func(signature: string): (pad: number) => number };
}

/** Trims done by this thread and the time they took; major collections it ran because none came in a window, and their time. */
export interface HeapReleaseStats {
  trims: number;
  trimMs: number;
  collections: number;
  collectionMs: number;
}

/** How long after a release request major collections are followed by a trim. */
export const RELEASE_WINDOW_MS = 1000;
/** Windows in a row a busy thread keeps trimming after its own major collections before it runs one. */
export const RELEASE_WINDOWS = 10;

const stats: HeapReleaseStats = { trims: 0, trimMs: 0, collections: 0, collectionMs: 0 };
let trim: ((pad: number) => number) | null | undefined;
let collect: (() => void) | null | undefined;
/** performance.now() until which major collections are followed by a trim. */
let windowEnd = 0;
/** Whether a major collection came in the current window. */
let collectedInWindow = false;
/** Windows left before the thread runs a major collection itself. */
let windowsLeft = 0;
let observer: PerformanceObserver | null = null;
let windowArmed = false;
/** performance.now() until which the quiet path waits (each request moves it). */
let quietAt = 0;
let quietArmed = false;

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

function loadCollect(): (() => void) | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  } catch {
    collect = null;
  }
  return collect;
}

function onMajorCollection(): void {
  collectedInWindow = true;
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

function openWindow(): void {
  windowEnd = performance.now() + RELEASE_WINDOW_MS;
  collectedInWindow = false;
  if (!windowArmed) {
    windowArmed = true;
    afterDeadline(() => windowEnd, onWindowEnd);
  }
  observe();
}

/** At the end of a window: opens the next while the thread collects on its own, else runs a major collection (the observer trims after it). */
function onWindowEnd(): void {
  windowArmed = false;
  if (collectedInWindow && --windowsLeft > 0) {
    openWindow();
    return;
  }
  collectAndTrim();
}

/** Runs a major collection and trims after it (and after any other in the next `RELEASE_WINDOW_MS`). */
function collectAndTrim(): void {
  if (loadCollect() === null) return;
  windowEnd = performance.now() + RELEASE_WINDOW_MS;
  observe();
  const start = performance.now();
  collect!();
  stats.collections++;
  stats.collectionMs += performance.now() - start;
}

/** Calls `due` once `deadline()` has passed; the deadline may move later while it waits, and the wait keeps no process alive. */
function afterDeadline(deadline: () => number, due: () => void): void {
  const left = deadline() - performance.now();
  if (left > 1) setTimeout(() => afterDeadline(deadline, due), left).unref();
  else due();
}

/** Asks for the heap's free pages to be returned after the major collections of the next windows, and for one major collection at their end. */
export function releaseFreedMemorySoon(): void {
  if (loadTrim() === null) return;
  windowsLeft = RELEASE_WINDOWS;
  openWindow();
}

/** Asks for one major collection and trim once no such request has come for `RELEASE_WINDOW_MS`; nothing is trimmed while they keep coming. */
export function releaseFreedMemoryWhenQuiet(): void {
  if (loadTrim() === null) return;
  quietAt = performance.now() + RELEASE_WINDOW_MS;
  if (quietArmed) return;
  quietArmed = true;
  afterDeadline(
    () => quietAt,
    () => {
      quietArmed = false;
      collectAndTrim();
    },
  );
}

function observe(): void {
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

/** Trims and collections done by this thread so far. */
export function heapReleaseStats(): HeapReleaseStats {
  return { ...stats };
}
