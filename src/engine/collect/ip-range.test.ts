import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaves, dealDocs, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({ properties: { address: { type: 'ip' }, text: { type: 'keyword' }, port: { type: 'integer' } } });
const ADDRESSES = ['10.0.0.1', '10.0.0.200', '10.0.1.5', '192.168.1.1', '2001:db8::1', '2001:db8:1::7', '::ffff:10.0.0.9'];
const docs: CorpusDoc[] = ADDRESSES.map((address, n) => ({ id: `h${n}`, source: { address, text: n === 6 ? 'not an address' : address, port: 80 + n } }));
const single = [buildLeaves(docs, fields, 2)];
const sharded = dealDocs(docs, 3).map((part) => buildLeaves(part, fields, 1));

function aggregate(shards: typeof single, aggs: unknown): any {
  return renderAggregations(mergeAggregations(shards.map((leaves) => executeQuery(leaves, fields, { from: 0, size: 0, aggs }).aggs!)), aggs);
}

const RANGES = [{ to: '10.0.0.200' }, { from: '10.0.0.200' }, { mask: '10.0.0.0/24' }, { mask: '2001:db8::/32' }, { key: 'all', from: '::' }];

test('ip_range on ip fields and on keyword fields holding addresses, the same on 1 and 3 shards', () => {
  const aggs = { ips: { ip_range: { field: 'address', ranges: RANGES }, aggs: { ports: { sum: { field: 'port' } } } }, texts: { ip_range: { field: 'text', ranges: RANGES } } };
  const one = aggregate(single, aggs);
  assert.deepEqual(aggregate(sharded, aggs), one);
  assert.deepEqual(
    one.ips.buckets.map((bucket: any) => ({ key: bucket.key, from: bucket.from, to: bucket.to, doc_count: bucket.doc_count })),
    [
      { key: '*-10.0.0.200', from: undefined, to: '10.0.0.200', doc_count: 2 },
      // IPv4 addresses are IPv4-mapped IPv6 ones: every 2001:db8:: address is above them.
      { key: '10.0.0.200-*', from: '10.0.0.200', to: undefined, doc_count: 5 },
      { key: '10.0.0.0/24', from: '10.0.0.0', to: '10.0.1.0', doc_count: 3 },
      { key: '2001:db8::/32', from: '2001:db8::', to: '2001:db9::', doc_count: 2 },
      { key: 'all', from: '::', to: undefined, doc_count: 7 },
    ],
  );
  assert.equal(one.ips.buckets[2].ports.value, 80 + 81 + 86);
  // The keyword field's value that is not an address is in no range.
  assert.deepEqual(one.texts.buckets.map((bucket: any) => bucket.doc_count), [1, 5, 2, 2, 6]);
  const keyed = aggregate(single, { ips: { ip_range: { field: 'address', keyed: true, ranges: [{ mask: '192.168.0.0/16' }] } } });
  assert.deepEqual(keyed.ips.buckets, { '192.168.0.0/16': { from: '192.168.0.0', to: '192.169.0.0', doc_count: 1 } });
});

test('bad ip_range requests are 400s', () => {
  for (const aggs of [
    { r: { ip_range: { field: 'address', ranges: [{ from: 'ten' }] } } },
    { r: { ip_range: { field: 'address', ranges: [{ mask: '10.0.0.0/33' }] } } },
    { r: { ip_range: { field: 'address', ranges: [{ mask: '10.0.0.0/8', from: '10.0.0.1' }] } } },
    { r: { ip_range: { field: 'address', ranges: [] } } },
    { r: { ip_range: { field: 'port', ranges: [{ to: '10.0.0.1' }] } } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});
