import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReadDescriptorCache } from './read-descriptors.ts';

test('at most `capacity` descriptors stay open; the least recently used closes first; forget closes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-fds-'));
  try {
    const files = Array.from({ length: 5 }, (_, index) => {
      const file = path.join(dir, `f${index}`);
      fs.writeFileSync(file, `file ${index}`);
      return file;
    });
    const cache = new ReadDescriptorCache(3);
    const readFirst = (file: string): string => {
      const buffer = Buffer.alloc(6);
      assert.equal(cache.read(file, buffer, 0, 6, 0), 6);
      return buffer.toString();
    };
    for (let round = 0; round < 3; round++) for (const [index, file] of files.entries()) assert.equal(readFirst(file), `file ${index}`);
    assert.equal(cache.stats().open, 3);
    readFirst(files[4]!);
    const opened = cache.stats().opened;
    readFirst(files[4]!);
    assert.equal(cache.stats().opened, opened, 'a cached descriptor is reused');
    assert.equal(cache.size(files[2]!), 6);
    for (const file of files) cache.forget(file);
    assert.equal(cache.stats().open, 0);
    fs.rmSync(files[0]!);
    assert.throws(() => readFirst(files[0]!), /ENOENT/, 'a forgotten file is opened afresh');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
