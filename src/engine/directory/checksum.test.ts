import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import test from 'node:test';
import { crc32c } from './checksum.ts';

test('crc32c matches the CRC32C check value and the same bytes give one answer on both sides of the native threshold', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
  const bytes = randomBytes(4096);
  const whole = crc32c(bytes);
  for (const cut of [0, 1, 100, 255, 256, 257, 1000, 4095, 4096]) {
    assert.equal(crc32c(bytes.subarray(cut), crc32c(bytes.subarray(0, cut))), whole, `split at ${cut}`);
  }
  const plain = new Uint8Array(bytes.buffer, bytes.byteOffset + 10, 1000);
  assert.equal(crc32c(plain), crc32c(Buffer.from(plain)), 'a Uint8Array view is read like a Buffer');
  assert.ok(whole >= 0 && whole <= 0xffffffff);
});
