import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  generateApiKey,
  hashApiKey,
  invalidSuppliedKeyReason,
  issuedKeyId,
  keyMatchesHash,
  MIN_SUPPLIED_KEY_LENGTH,
} from './api-key-material.ts';

test('generated keys carry their id and 256 bits of base64url secret, and differ every time', () => {
  const seen = new Set<string>();
  for (let round = 0; round < 200; round++) {
    const { id, key } = generateApiKey();
    assert.match(id, /^[0-9a-f]{16}$/);
    assert.match(key, /^trove_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    assert.equal(issuedKeyId(key), id);
    assert.ok(!seen.has(key));
    seen.add(key);
  }
});

test('issuedKeyId is null for anything that is not exactly an issued key', () => {
  const { key } = generateApiKey();
  for (const other of ['', 'trove_', key.slice(0, -1), `${key}x`, `x${key}`, key.replace('trove_', 'TROVE_'), 'Bearer abc']) {
    assert.equal(issuedKeyId(other), null, other);
  }
});

test('only the exact key matches its stored hash; stored hashes never contain the key', () => {
  const { key } = generateApiKey();
  const stored = hashApiKey(key);
  assert.match(stored, /^hmac-sha256:[A-Za-z0-9_-]{22}:[0-9a-f]{64}$/);
  assert.ok(!stored.includes(key.slice(6)));
  assert.equal(keyMatchesHash(key, stored), true);
  assert.equal(keyMatchesHash(`${key}x`, stored), false);
  assert.equal(keyMatchesHash(key.slice(0, -1), stored), false);
  assert.equal(keyMatchesHash(generateApiKey().key, stored), false);
  assert.equal(keyMatchesHash(key, 'md5:abcd'), false, 'an unknown hash scheme never matches');
  assert.equal(keyMatchesHash(key, 'sha256:abcd'), false, 'a truncated digest never matches');
  assert.equal(keyMatchesHash(key, stored.slice(0, -2)), false, 'a truncated salted digest never matches');
});

test('hashes are salted: the same key stored twice gives two different hashes that both match', () => {
  const { key } = generateApiKey();
  const first = hashApiKey(key);
  const second = hashApiKey(key);
  assert.notEqual(first, second);
  assert.equal(keyMatchesHash(key, first), true);
  assert.equal(keyMatchesHash(key, second), true);
  const [, salt, digest] = first.split(':');
  const otherSalt = salt.startsWith('A') ? `B${salt.slice(1)}` : `A${salt.slice(1)}`;
  assert.equal(keyMatchesHash(key, `hmac-sha256:${otherSalt}:${digest}`), false, 'the digest is bound to its salt');
  assert.notEqual(digest, createHash('sha256').update(key).digest('hex'), 'not the plain SHA-256');
});

test('records of earlier versions (unsalted sha256:<hex>) keep matching after the upgrade', () => {
  const { key } = generateApiKey();
  const legacy = `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
  assert.equal(keyMatchesHash(key, legacy), true);
  assert.equal(keyMatchesHash(`${key}x`, legacy), false);
});

test('operator-supplied keys must be long enough and use bearer-token characters', () => {
  assert.equal(invalidSuppliedKeyReason('a'.repeat(MIN_SUPPLIED_KEY_LENGTH)), null);
  assert.equal(invalidSuppliedKeyReason('Abc.def_ghi~jkl+mno/pqr=stu-vwx'), null);
  assert.match(invalidSuppliedKeyReason('short') ?? '', /at least/);
  assert.match(invalidSuppliedKeyReason(`${'a'.repeat(30)} b`) ?? '', /only contain/);
  assert.match(invalidSuppliedKeyReason('a'.repeat(600)) ?? '', /at most/);
});
