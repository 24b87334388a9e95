import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { heapReleaseStats, releaseFreedMemorySoon } from './heap-release.ts';

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

test('a release request returns freed heap pages to the system after the next major collection', { skip: !glibc && 'needs glibc' }, async () => {
  // Freeing a large mapped block raises glibc's mmap threshold, so the 1 MiB buffers below come
  // from the heap; the small buffers between them stay alive, so nothing frees the heap's top.
  let raise: Buffer | null = Buffer.alloc(16 * MIB, 1);
  raise = null;
  await settle();
  const pins: Buffer[] = [];
  let chunks: Buffer[] | null = [];
  for (let i = 0; i < 256; i++) {
    chunks.push(Buffer.alloc(MIB, i));
    pins.push(Buffer.alloc(64 * 1024, i));
  }
  chunks = null;
  await settle();
  const freedNotReturned = process.memoryUsage().rss;
  const before = heapReleaseStats().trims;

  releaseFreedMemorySoon();
  await settle();

  assert.equal(heapReleaseStats().trims, before + 1);
  const returned = freedNotReturned - process.memoryUsage().rss;
  assert.ok(returned > 128 * MIB, `only ${(returned / MIB).toFixed(0)} MiB returned of 256 MiB freed`);
  assert.equal(pins.length, 256);
  assert.equal(raise, null);
});

test('without a request, collections trim nothing', async () => {
  const before = heapReleaseStats().trims;
  await settle();
  assert.equal(heapReleaseStats().trims, before);
});
