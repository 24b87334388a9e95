import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  HmacNodeCredentialVerifier,
  NODE_CREDENTIAL_SCHEME,
  nodeCredentialHeader,
  nodeCredentialToken,
  NodeCredentialSigner,
} from './node-credential-hmac.ts';

const SECRET = randomBytes(32).toString('base64url');
const NOW = 1_700_000_000_500;

test('a token made with the cluster secret names its node; one made with another secret does not verify', () => {
  const verifier = new HmacNodeCredentialVerifier(SECRET, { now: () => NOW });
  assert.equal(verifier.scheme, NODE_CREDENTIAL_SCHEME);
  const token = nodeCredentialToken(SECRET, 'AbC-_09xyz', NOW);
  assert.match(token, /^AbC-_09xyz\.1700000000\.[A-Za-z0-9_-]{43}$/);
  assert.equal(verifier.verify(token), 'AbC-_09xyz');
  assert.equal(nodeCredentialHeader(SECRET, 'AbC-_09xyz', NOW), `TroveNode ${token}`);
  assert.equal(verifier.verify(nodeCredentialToken(randomBytes(32).toString('base64url'), 'AbC-_09xyz', NOW)), null);
});

test('a token bound to one node or one second cannot be edited into another', () => {
  const verifier = new HmacNodeCredentialVerifier(SECRET, { now: () => NOW });
  const [nodeId, seconds, mac] = nodeCredentialToken(SECRET, 'node-a', NOW).split('.') as [string, string, string];
  assert.equal(verifier.verify(`node-b.${seconds}.${mac}`), null, 'another node id');
  assert.equal(verifier.verify(`${nodeId}.${Number(seconds) + 1}.${mac}`), null, 'another time');
  const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
  assert.equal(verifier.verify(`${nodeId}.${seconds}.${flipped}`), null, 'another MAC');
  assert.equal(verifier.verify(`${nodeId}.${seconds}.${mac}=`), null, 'padding is not ignored');
});

test('malformed tokens are refused without throwing', () => {
  const verifier = new HmacNodeCredentialVerifier(SECRET, { now: () => NOW });
  for (const token of ['', 'node', 'node.1700000000', 'a.b.c', '.1700000000.x', 'node.1700000000.x.y', 'node.-5.abc', 'node.17e8.abc']) {
    assert.equal(verifier.verify(token), null, token);
  }
  assert.throws(() => nodeCredentialToken(SECRET, 'dotted.id'), /cannot be put in a node credential/);
  assert.throws(() => new HmacNodeCredentialVerifier(''), /secret is empty/);
});

test('a token is accepted within the allowed clock skew either way, and refused beyond it', () => {
  const madeAt = NOW;
  const token = nodeCredentialToken(SECRET, 'node-a', madeAt);
  const at = (now: number) => new HmacNodeCredentialVerifier(SECRET, { now: () => now, maxSkewMs: 60_000 }).verify(token);
  const second = Math.floor(madeAt / 1000) * 1000;
  assert.equal(at(second + 999 + 60_000), 'node-a', 'the caller may lag by the skew');
  assert.equal(at(second + 1000 + 60_000), null);
  assert.equal(at(second - 60_000), 'node-a', 'the caller may run ahead by the skew');
  assert.equal(at(second - 60_001), null);
});

test('the signer makes one header per second of its clock', () => {
  let now = NOW;
  const signer = new NodeCredentialSigner(SECRET, 'node-a', () => now);
  const first = signer.header();
  now += 400;
  assert.equal(signer.header(), first);
  now += 600;
  const next = signer.header();
  assert.notEqual(next, first);
  assert.equal(next, nodeCredentialHeader(SECRET, 'node-a', now));
  assert.equal(new HmacNodeCredentialVerifier(SECRET, { now: () => now }).verify(next.slice(NODE_CREDENTIAL_SCHEME.length + 1)), 'node-a');
});
