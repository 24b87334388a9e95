import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cidrTermRange, decodeIp, encodeIp, IP_TERM_LENGTH } from './ip.ts';

test('IPv4 and IPv6 addresses round-trip through their terms in canonical form', () => {
  const cases: [string, string][] = [
    ['192.168.1.10', '192.168.1.10'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['::', '::'],
    ['::1', '::1'],
    ['fe80::1:0:0:1', 'fe80::1:0:0:1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
  ];
  for (const [input, rendered] of cases) {
    const term = encodeIp(input);
    assert.ok(term !== null, input);
    assert.equal(term.length, IP_TERM_LENGTH);
    assert.equal(decodeIp(term), rendered, input);
  }
});

test('malformed addresses have no term', () => {
  for (const bad of ['', '1.2.3', '1.2.3.256', '01.2.3.4', '1.2.3.4.5', 'a.b.c.d', '1::2::3', '1:2:3:4:5:6:7:8:9', ':::', 'gggg::1', '12345::', 'hello', '1.2.3.4/8']) {
    assert.equal(encodeIp(bad), null, bad);
  }
});

test('terms sort like the addresses, IPv4 inside the IPv4-mapped block', () => {
  const ordered = ['::1', '0.0.0.1', '10.0.0.2', '10.0.0.10', '192.168.0.1', '2001:db8::1', 'ffff::'];
  const terms = ordered.map((address) => encodeIp(address)!);
  assert.deepEqual([...terms].sort(), terms);
});

test('CIDR blocks give their first and last address terms', () => {
  const block = cidrTermRange('192.168.0.0/16')!;
  assert.equal(decodeIp(block.lower), '192.168.0.0');
  assert.equal(decodeIp(block.upper), '192.168.255.255');
  const host = cidrTermRange('10.1.2.3/32')!;
  assert.equal(host.lower, host.upper);
  const v6 = cidrTermRange('2001:db8::/32')!;
  assert.equal(decodeIp(v6.lower), '2001:db8::');
  assert.equal(decodeIp(v6.upper), '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff');
  const all = cidrTermRange('0.0.0.0/0')!;
  assert.equal(decodeIp(all.lower), '0.0.0.0');
  assert.equal(decodeIp(all.upper), '255.255.255.255');
  for (const bad of ['10.0.0.0/33', '2001:db8::/129', '10.0.0.0/x', 'nope/8', '10.0.0.0']) assert.equal(cidrTermRange(bad), null, bad);
});
