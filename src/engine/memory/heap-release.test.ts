import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { heapReleaseStats, releaseFreedMemorySoon, releaseFreedMemoryWhenQuiet, RELEASE_WINDOW_MS, RELEASE_WINDOWS } from './heap-release.ts';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const MIB = 1024 * 1024;

async function settle(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const glibc = process.platform === 'linux' && (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;

/** One major collection, and time for the observer to hear of it. */
async function collectOnce(): Promise<void> {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * 256 MiB of 1 MiB heap chunks with a small live buffer after each (so nothing frees the heap's
 * top). Freeing a large mapped block first raises glibc's mmap threshold, so the chunks come
 * from the heap.
 */
async function pinnedChunks(): Promise<{ chunks: Buffer[]; pins: Buffer[] }> {
  let raise: Buffer | null = Buffer.alloc(16 * MIB, 1);
  raise = null;
  await settle();
  const pins: Buffer[] = [];
  const chunks: Buffer[] = [];
  for (let i = 0; i < 256; i++) {
    chunks.push(Buffer.alloc(MIB, i));
    pins.push(Buffer.alloc(64 * 1024, i));
  }
  assert.equal(raise, null);
  return { chunks, pins };
}

test('a release request returns freed heap pages to the system after the next major collection', { skip: !glibc && 'needs glibc' }, async () => {
  let held: { chunks: Buffer[] | null; pins: Buffer[] } = await pinnedChunks();
  held.chunks = null;
  await settle();
  const freedNotReturned = process.memoryUsage().rss;
  const before = heapReleaseStats().trims;

  releaseFreedMemorySoon();
  await collectOnce();

  assert.equal(heapReleaseStats().trims, before + 1);
  const returned = freedNotReturned - process.memoryUsage().rss;
  assert.ok(returned > 128 * MIB, `only ${(returned / MIB).toFixed(0)} MiB returned of 256 MiB freed`);
  assert.equal(held.pins.length, 256);
  held = { chunks: null, pins: [] };
});

test('memory freed after the first collection that follows a request is returned by a later one', { skip: !glibc && 'needs glibc' }, async () => {
  await new Promise((resolve) => setTimeout(resolve, RELEASE_WINDOW_MS));
  let held: { chunks: Buffer[] | null; pins: Buffer[] } = await pinnedChunks();
  releaseFreedMemorySoon();
  await collectOnce();
  const whileHeld = process.memoryUsage().rss;
  const before = heapReleaseStats().trims;
  // Buffers that become garbage after that collection, as a merge's sources may.
  held.chunks = null;
  await collectOnce();

  assert.equal(heapReleaseStats().trims, before + 1);
  const returned = whileHeld - process.memoryUsage().rss;
  assert.ok(returned > 128 * MIB, `only ${(returned / MIB).toFixed(0)} MiB returned of 256 MiB freed`);
  held = { chunks: null, pins: [] };
});

test('a thread that runs no major collection after a request runs one itself and returns what it freed', { skip: !glibc && 'needs glibc' }, async () => {
  let held: { chunks: Buffer[] | null; pins: Buffer[] } = await pinnedChunks();
  const whileHeld = process.memoryUsage().rss;
  const before = heapReleaseStats();
  releaseFreedMemorySoon();
  // Dropped without a collection, as a frozen layer or a merge's sources are once their readers are done.
  held.chunks = null;
  const deadline = performance.now() + (RELEASE_WINDOWS + 2) * RELEASE_WINDOW_MS;
  const poll = async (done: () => boolean): Promise<void> => {
    while (!done() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  const returned = (): number => whileHeld - process.memoryUsage().rss;
  await poll(() => heapReleaseStats().collections > before.collections && returned() > 128 * MIB);

  assert.equal(heapReleaseStats().collections, before.collections + 1);
  assert.ok(heapReleaseStats().trims > before.trims);
  assert.ok(returned() > 128 * MIB, `only ${(returned() / MIB).toFixed(0)} MiB returned of 256 MiB freed`);
  held = { chunks: null, pins: [] };
});

test('quiet-path requests collect and trim nothing while they come, and once after they stop', { skip: !glibc && 'needs glibc' }, async () => {
  await new Promise((resolve) => setTimeout(resolve, RELEASE_WINDOW_MS + 50));
  let held: { chunks: Buffer[] | null; pins: Buffer[] } = await pinnedChunks();
  const whileHeld = process.memoryUsage().rss;
  const before = heapReleaseStats();
  // Requests every tenth of a window for two windows, dropping a large buffer each time, as bulk requests do.
  for (let i = 0; i < 20; i++) {
    releaseFreedMemoryWhenQuiet();
    if (i === 0) held.chunks = null;
    await new Promise((resolve) => setTimeout(resolve, RELEASE_WINDOW_MS / 10));
  }
  const whileComing = heapReleaseStats();
  assert.equal(whileComing.collections, before.collections);
  assert.equal(whileComing.trims, before.trims);

  const returned = (): number => whileHeld - process.memoryUsage().rss;
  const deadline = performance.now() + 5 * RELEASE_WINDOW_MS;
  while (!(heapReleaseStats().collections > before.collections && returned() > 128 * MIB) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(heapReleaseStats().collections, before.collections + 1);
  assert.ok(returned() > 128 * MIB, `only ${(returned() / MIB).toFixed(0)} MiB returned of 256 MiB freed`);
  held = { chunks: null, pins: [] };
});

test('without a request, collections trim nothing', async () => {
  // The window the collection of the test before opened.
  await new Promise((resolve) => setTimeout(resolve, RELEASE_WINDOW_MS + 50));
  await collectOnce();
  const before = heapReleaseStats().trims;
  await settle();
  assert.equal(heapReleaseStats().trims, before);
});
