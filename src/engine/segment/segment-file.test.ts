import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32c } from '../directory/checksum.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, OutputFile, PAGE_BYTES, SEGMENT_FORMAT_VERSION, pageTableOf, readVerifiedFile } from './segment-file.ts';

/** The bytes a file of `magic` with `body` must have: header, body, page table when paged, CRC32C footer of all before it. */
function expectedFile(magic: string, body: Uint8Array, paged: boolean): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(magic, 0, 'latin1');
  header.writeUInt32LE(SEGMENT_FORMAT_VERSION, 4);
  const content = Buffer.concat([header, body]);
  const withTable = paged ? Buffer.concat([content, pageTableOf(content)]) : content;
  const footer = Buffer.alloc(FOOTER_BYTES);
  footer.writeUInt32LE(crc32c(withTable), 0);
  return Buffer.concat([withTable, footer]);
}

test('OutputFile writes paged and unpaged files byte for byte, the footer the CRC32C of the whole, whatever the page fill', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-segment-file-'));
  try {
    const pageBodies = [0, 1, PAGE_BYTES - HEADER_BYTES - 1, PAGE_BYTES - HEADER_BYTES, PAGE_BYTES - HEADER_BYTES + 1, 3 * PAGE_BYTES - HEADER_BYTES, 5 * PAGE_BYTES + 777];
    const randomBodies = Array.from({ length: 6 }, () => randomInt(0, 8 * PAGE_BYTES));
    for (const [magic, paged] of [
      [FileMagic.postings, true],
      [FileMagic.norms, false],
    ] as const) {
      for (const length of [...pageBodies, ...randomBodies]) {
        const body = randomBytes(length);
        const filePath = path.join(dir, `${magic}-${length}`);
        const output = await OutputFile.create(filePath, magic);
        for (let offset = 0; offset < body.length; ) {
          const take = Math.min(body.length - offset, 1 + randomInt(0, 3 * PAGE_BYTES));
          output.sink.writeBytes(body.subarray(offset, offset + take));
          offset += take;
          if (randomInt(0, 2) === 0) await output.drain();
        }
        const checksum = await output.finish();
        const expected = expectedFile(magic, body, paged);
        const onDisk = fs.readFileSync(filePath);
        assert.ok(onDisk.equals(expected), `${magic}, body of ${length} bytes`);
        assert.deepEqual(checksum, { bytes: expected.length, crc32c: crc32c(expected.subarray(0, expected.length - FOOTER_BYTES)) });
        readVerifiedFile(filePath, magic, checksum);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed write behind surfaces at finish, and the file can still be abandoned', { skip: !fs.existsSync('/dev/full') }, async () => {
  // Every write to /dev/full fails with ENOSPC.
  const output = await OutputFile.create('/dev/full', FileMagic.postings);
  output.sink.writeBytes(randomBytes(3 * 256 * 1024));
  await output.drain();
  await assert.rejects(output.finish(), (error: NodeJS.ErrnoException) => error.code === 'ENOSPC');
  await output.abandon();
});
