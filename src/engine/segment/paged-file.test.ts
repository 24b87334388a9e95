import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32c } from '../directory/checksum.ts';
import { pageCache } from '../directory/page-cache.ts';
import { EngineError } from '../errors.ts';
import { LoadedDataFile, openSegmentDataFile, PagedDataFile, READ_PADDING } from './paged-file.ts';
import { seededRandom } from './reference-leaf.fixture.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, OutputFile, PAGE_BYTES, PAGE_TABLE_TRAILER_BYTES, pageTableOf, readVerifiedFile } from './segment-file.ts';

async function withTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-paged-'));
  try {
    await run(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `body` through OutputFile in uneven drained chunks; returns the file's recorded checksum. */
async function writePaged(filePath: string, body: Uint8Array) {
  const output = await OutputFile.create(filePath, FileMagic.postings);
  const random = seededRandom(7);
  for (let offset = 0; offset < body.length; ) {
    const take = Math.min(body.length - offset, 1 + Math.floor(random() * 9000));
    output.sink.writeBytes(body.subarray(offset, offset + take));
    offset += take;
    if (random() < 0.5) await output.drain();
  }
  return output.finish();
}

function randomBody(length: number, seed: number): Uint8Array {
  const random = seededRandom(seed);
  return Uint8Array.from({ length }, () => Math.floor(random() * 256));
}

const isCorrupt = (filePath: string, detail: RegExp) => (error: unknown) =>
  error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes(filePath) && detail.test(error.message);

test('a paged file round-trips: every range reads back its bytes, within a page or across pages, padded with zeros', async () => {
  await withTempDir(async (dir) => {
    const filePath = path.join(dir, 'postings.doc');
    const body = randomBody(Math.floor(PAGE_BYTES * 3.5), 1);
    const checksum = await writePaged(filePath, body);
    const onDisk = fs.readFileSync(filePath);
    const content = onDisk.subarray(0, HEADER_BYTES + body.length);
    assert.deepEqual(onDisk.subarray(HEADER_BYTES + body.length, onDisk.length - FOOTER_BYTES), pageTableOf(content), 'the table OutputFile wrote');
    assert.equal(checksum.bytes, HEADER_BYTES + body.length + 4 * 4 + PAGE_TABLE_TRAILER_BYTES + FOOTER_BYTES);
    readVerifiedFile(filePath, FileMagic.postings, checksum);

    const file = openSegmentDataFile(filePath, FileMagic.postings, checksum);
    assert.ok(file instanceof PagedDataFile);
    assert.equal(file.bodyEnd, HEADER_BYTES + body.length);
    const random = seededRandom(2);
    const ranges: [number, number][] = [
      [HEADER_BYTES, HEADER_BYTES + 10],
      [PAGE_BYTES - 5, PAGE_BYTES + 5],
      [10, file.bodyEnd],
      [file.bodyEnd - 3, file.bodyEnd],
      [PAGE_BYTES, 2 * PAGE_BYTES],
    ];
    for (let i = 0; i < 200; i++) {
      const start = HEADER_BYTES + Math.floor(random() * body.length);
      ranges.push([start, Math.min(file.bodyEnd, start + Math.floor(random() * PAGE_BYTES * 1.5))]);
    }
    for (const [start, end] of ranges) {
      const data = file.read(start, end);
      const base: number = file.base;
      assert.ok(base <= start && data.length >= end - base + READ_PADDING, `range ${start}..${end}`);
      assert.deepEqual(data.subarray(start - base, end - base), body.subarray(start - HEADER_BYTES, end - HEADER_BYTES), `range ${start}..${end}`);
      if (end === file.bodyEnd) assert.deepEqual([...data.subarray(end - base, end - base + READ_PADDING)], new Array(READ_PADDING).fill(0));
    }
    assert.throws(() => file.read(5, file.bodyEnd + 1), isCorrupt(filePath, /outside the data/));
    file.close();
  });
});

test('a damaged page is reported as corrupt_index naming the file when it is read; other pages still read', async () => {
  await withTempDir(async (dir) => {
    const filePath = path.join(dir, 'postings.doc');
    const body = randomBody(PAGE_BYTES * 3, 3);
    const checksum = await writePaged(filePath, body);
    const damaged = fs.readFileSync(filePath);
    damaged[2 * PAGE_BYTES + 100] ^= 0x01;
    fs.writeFileSync(filePath, damaged);
    const file = openSegmentDataFile(filePath, FileMagic.postings, checksum);
    assert.deepEqual(file.read(HEADER_BYTES, HEADER_BYTES + 100).subarray(HEADER_BYTES - file.base, HEADER_BYTES + 100 - file.base), body.subarray(0, 100));
    assert.throws(() => file.read(2 * PAGE_BYTES + 50, 2 * PAGE_BYTES + 200), isCorrupt(filePath, /checksum mismatch in page 2/));
    assert.throws(() => file.read(PAGE_BYTES + 50, 2 * PAGE_BYTES + 200), isCorrupt(filePath, /page 2/), 'a range across the damaged page');
    file.close();
    assert.throws(() => readVerifiedFile(filePath, FileMagic.postings, checksum), isCorrupt(filePath, /checksum/), 'whole-file verification sees it too');
  });
});

test('a damaged page table, header or size fails open naming the file', async () => {
  await withTempDir(async (dir) => {
    const filePath = path.join(dir, 'terms');
    const body = randomBody(PAGE_BYTES * 2 + 17, 4);
    const checksum = await writePaged(filePath, body);
    const original = fs.readFileSync(filePath);
    const damage = (offset: number): void => {
      const copy = Buffer.from(original);
      copy[offset] ^= 0x04;
      fs.writeFileSync(filePath, copy);
    };
    damage(HEADER_BYTES + body.length + 4);
    assert.throws(() => openSegmentDataFile(filePath, FileMagic.postings, checksum), isCorrupt(filePath, /page table/));
    damage(original.length - FOOTER_BYTES - 8);
    assert.throws(() => openSegmentDataFile(filePath, FileMagic.postings, checksum), isCorrupt(filePath, /page table/));
    damage(1);
    assert.throws(() => openSegmentDataFile(filePath, FileMagic.postings, checksum), isCorrupt(filePath, /magic/));
    fs.writeFileSync(filePath, original.subarray(0, original.length - 1));
    assert.throws(() => openSegmentDataFile(filePath, FileMagic.postings, checksum), isCorrupt(filePath, /size/));
  });
});

test('a file of an earlier format (no page table) is read and verified whole, and reads the same ranges', async () => {
  await withTempDir(async (dir) => {
    const filePath = path.join(dir, 'postings.doc');
    const body = randomBody(PAGE_BYTES + 999, 5);
    const content = Buffer.concat([Buffer.from(FileMagic.postings, 'latin1'), Buffer.from([5, 0, 0, 0]), body]);
    const footer = Buffer.alloc(FOOTER_BYTES);
    footer.writeUInt32LE(crc32c(content));
    fs.writeFileSync(filePath, Buffer.concat([content, footer]));
    const file = openSegmentDataFile(filePath, FileMagic.postings, { bytes: content.length + FOOTER_BYTES, crc32c: crc32c(content) });
    assert.ok(file instanceof LoadedDataFile);
    assert.equal(file.bodyEnd, content.length);
    const data = file.read(PAGE_BYTES - 3, PAGE_BYTES + 40);
    assert.deepEqual(data.subarray(PAGE_BYTES - 3 - file.base, PAGE_BYTES + 40 - file.base), content.subarray(PAGE_BYTES - 3, PAGE_BYTES + 40));
    const damaged = Buffer.concat([content, footer]);
    damaged[PAGE_BYTES] ^= 0x02;
    fs.writeFileSync(filePath, damaged);
    assert.throws(() => openSegmentDataFile(filePath, FileMagic.postings, undefined), isCorrupt(filePath, /checksum/));
  });
});

test("reads go through the thread's page cache, which stays within its capacity; closing drops the file's pages", async () => {
  await withTempDir(async (dir) => {
    const filePath = path.join(dir, 'postings.pos');
    const body = randomBody(PAGE_BYTES * 20, 6);
    const checksum = await writePaged(filePath, body);
    const capacity = pageCache.stats().capacityBytes;
    const pageFootprint = PAGE_BYTES + READ_PADDING;
    pageCache.resize(4 * pageFootprint);
    try {
      const before = pageCache.stats();
      const file = openSegmentDataFile(filePath, FileMagic.postings, checksum);
      for (let round = 0; round < 2; round++) {
        for (let page = 0; page < 20; page++) {
          const start = Math.max(HEADER_BYTES, page * PAGE_BYTES);
          const data = file.read(start, start + 64);
          assert.deepEqual(data.subarray(start - file.base, start + 64 - file.base), body.subarray(start - HEADER_BYTES, start + 64 - HEADER_BYTES));
          assert.ok(pageCache.stats().bytes <= 4 * pageFootprint, `${pageCache.stats().bytes} bytes cached`);
        }
      }
      const after = pageCache.stats();
      assert.ok(after.evictions - before.evictions >= 36, 'pages were evicted to stay within the bound');
      file.read(19 * PAGE_BYTES, 19 * PAGE_BYTES + 10);
      assert.equal(pageCache.stats().hits, after.hits + 1, 'a recently read page is a hit');
      file.close();
      assert.equal(pageCache.stats().pages, after.pages - 4, "closing dropped the file's pages");
    } finally {
      pageCache.resize(capacity);
    }
  });
});

test('sequential reads pass a range in order, in parts of many pages, each page verified, and name the file of a damaged page', async () => {
  await withTempDir(async (dir) => {
    const filePath = path.join(dir, 'postings.doc');
    // More pages than one sequential read takes, the last one partial.
    const body = randomBody(PAGE_BYTES * 70 + 123, 11);
    const checksum = await writePaged(filePath, body);
    const file = openSegmentDataFile(filePath, FileMagic.postings, checksum) as PagedDataFile;
    const collect = (start: number, end: number): { bytes: Buffer; parts: number } => {
      const parts: Buffer[] = [];
      file.readSequential(start, end, (bytes) => parts.push(Buffer.from(bytes)));
      return { bytes: Buffer.concat(parts), parts: parts.length };
    };
    const end = HEADER_BYTES + body.length;
    const ranges: [number, number][] = [
      [HEADER_BYTES, end],
      [HEADER_BYTES + 5, HEADER_BYTES + 6],
      [PAGE_BYTES - 3, PAGE_BYTES + 3],
      [PAGE_BYTES * 63 + 7, PAGE_BYTES * 65 + 9],
      [end - 10, end],
      [PAGE_BYTES * 2, PAGE_BYTES * 2],
    ];
    for (const [start, stop] of ranges) {
      const { bytes } = collect(start, stop);
      assert.deepEqual(bytes, Buffer.from(body.subarray(start - HEADER_BYTES, stop - HEADER_BYTES)), `bytes ${start}..${stop}`);
    }
    assert.equal(collect(HEADER_BYTES, end).parts, 2, 'a whole-file read in two parts of at most 64 pages');
    assert.throws(() => file.readSequential(HEADER_BYTES, end + 1, () => undefined), isCorrupt(filePath, /outside the data/));
    file.close();

    const damaged = fs.readFileSync(filePath);
    damaged[66 * PAGE_BYTES + 100] ^= 0x01;
    fs.writeFileSync(filePath, damaged);
    const reopened = openSegmentDataFile(filePath, FileMagic.postings, checksum) as PagedDataFile;
    assert.throws(() => reopened.readSequential(HEADER_BYTES, end, () => undefined), isCorrupt(filePath, /checksum mismatch in page 66/));
    let visited = 0;
    reopened.readSequential(HEADER_BYTES, PAGE_BYTES * 60, () => visited++);
    assert.equal(visited, 1, 'pages before the damaged one still read');
    reopened.close();
  });
});
