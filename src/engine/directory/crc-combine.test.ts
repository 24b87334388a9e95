import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import test from 'node:test';
import { crc32c } from './checksum.ts';
import { Crc32cShift, crc32cCombine } from './crc-combine.ts';

test('crc32cCombine gives the CRC32C of a concatenation, empty parts included', () => {
  const lengths = [0, 1, 2, 3, 4, 7, 100, 255, 256, 257, 4095, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 70_000];
  for (const lengthA of [0, 1, 13, 300, 16 * 1024]) {
    for (const lengthB of lengths) {
      const a = randomBytes(lengthA);
      const b = randomBytes(lengthB);
      const expected = crc32c(Buffer.concat([a, b]));
      assert.equal(crc32cCombine(crc32c(a), crc32c(b), lengthB), expected, `|A| ${lengthA}, |B| ${lengthB}`);
    }
  }
});

test('crc32cCombine over random splits of random data', () => {
  for (let round = 0; round < 50; round++) {
    const bytes = randomBytes(randomInt(0, 50_000));
    const cut = randomInt(0, bytes.length + 1);
    const a = bytes.subarray(0, cut);
    const b = bytes.subarray(cut);
    assert.equal(crc32cCombine(crc32c(a), crc32c(b), b.length), crc32c(bytes), `length ${bytes.length}, cut ${cut}`);
  }
});

test('Crc32cShift folds pages of its length, then a shorter last one, into the CRC32C of the whole', () => {
  for (const pageBytes of [1, 64, 16 * 1024]) {
    const shift = new Crc32cShift(pageBytes);
    for (const total of [0, 1, pageBytes - 1, pageBytes, pageBytes + 1, 3 * pageBytes, 5 * pageBytes + 17]) {
      const bytes = randomBytes(total);
      let crc = 0;
      let offset = 0;
      for (; offset + pageBytes <= total; offset += pageBytes) crc = shift.combine(crc, crc32c(bytes.subarray(offset, offset + pageBytes)));
      const rest = bytes.subarray(offset);
      crc = crc32cCombine(crc, crc32c(rest), rest.length);
      assert.equal(crc, crc32c(bytes), `page ${pageBytes}, total ${total}`);
    }
  }
});

test('Crc32cShift of length 0 leaves the first CRC, and both refuse invalid lengths', () => {
  const a = randomBytes(1000);
  assert.equal(new Crc32cShift(0).combine(crc32c(a), 0), crc32c(a));
  assert.equal(crc32cCombine(crc32c(a), 0, 0), crc32c(a));
  assert.throws(() => new Crc32cShift(-1), RangeError);
  assert.throws(() => crc32cCombine(0, 0, 1.5), RangeError);
});
