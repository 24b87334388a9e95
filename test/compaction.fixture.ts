/**
 * Shared steps of the compaction suites: a mail collection bulk-imported in several batches (so
 * epochs cut several segments per shard), then deletions and updates that leave deleted documents
 * in those segments; a snapshot of search results to compare before and after; and polling of
 * jobs and `_cat/segments`.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { emails } from './corpora.ts';
import { call, ndjson, type TroveServer } from './harness.ts';

/** Settings that make epochs frequent and leave merging to compaction. */
export const COMPACTION_SETTINGS = { 'epoch.max_docs': '150', 'epoch.interval_ms': '300', 'merge.enabled': 'false' };

const MAPPINGS = {
  properties: {
    mid: { type: 'keyword' },
    group: { type: 'keyword' },
    spam: { type: 'boolean' },
    subject: { type: 'text' },
    from: { type: 'keyword' },
    date: { type: 'date' },
    body: { type: 'text' },
  },
};

/** One row of `_cat/segments?format=json&bytes=b` with every column. */
export interface SegmentRow {
  index: string;
  shard: string;
  'shard.uuid': string;
  segment: string;
  'docs.count': string;
  'docs.deleted': string;
  size: string;
}

/** Sends an NDJSON `_bulk` body and checks that no item failed. */
export async function bulk(server: TroveServer, collection: string, lines: unknown[]): Promise<void> {
  const response = await call(server, 'POST', `/${collection}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(response.status, 200, response.text.slice(0, 500));
  assert.equal(response.body.errors, false, response.text.slice(0, 500));
}

/**
 * Creates `collection` and imports `count` e-mails in batches of 200, then deletes every 7th and
 * rewrites the subject of every 5th (a full update: the old copy becomes a deleted document).
 * Returns the number of live documents.
 */
export async function importMail(server: TroveServer, collection: string, count: number, shards: number): Promise<number> {
  const created = await call(server, 'PUT', `/${collection}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const docs = emails(count);
  for (let start = 0; start < docs.length; start += 200) {
    await bulk(server, collection, docs.slice(start, start + 200).flatMap(({ id, ...doc }) => [{ index: { _id: id } }, { ...doc, mid: id }]));
  }
  const deleted = docs.filter((_, index) => index % 7 === 3);
  const updated = docs.filter((_, index) => index % 5 === 1 && index % 7 !== 3);
  await bulk(server, collection, deleted.map((doc) => ({ delete: { _id: doc.id } })));
  await bulk(server, collection, updated.flatMap((doc) => [{ update: { _id: doc.id } }, { doc: { subject: `${doc.subject} revised` } }]));
  return docs.length - deleted.length;
}

const SORT = [{ mid: 'asc' }];

/** Queries whose full results (ids, sources, totals, aggregations) a compaction must not change. */
const QUERIES: unknown[] = [
  { query: { match_all: {} }, sort: SORT, size: 2000, track_total_hits: true },
  { query: { match: { body: 'money' } }, sort: SORT, size: 2000, track_total_hits: true },
  { query: { bool: { must: [{ match: { subject: 'revised' } }], filter: [{ term: { spam: true } }] } }, sort: SORT, size: 2000, track_total_hits: true },
  { query: { match_phrase: { body: 'click here' } }, sort: SORT, size: 2000, track_total_hits: true },
  { size: 0, track_total_hits: true, aggs: { groups: { terms: { field: 'group' } }, senders: { cardinality: { field: 'from' } } } },
];

/** Ranked by score: compared as totals and the set of matching ids (scores use per-shard statistics). */
const SCORED = { query: { match: { body: 'free offer' } }, size: 2000, track_total_hits: true };

/** Everything the snapshot queries return that must survive compaction unchanged. */
export async function searchSnapshot(server: TroveServer, collection: string): Promise<unknown[]> {
  const results: unknown[] = [];
  for (const body of QUERIES) {
    const response = await call(server, 'POST', `/${collection}/_search`, { json: body });
    assert.equal(response.status, 200, response.text.slice(0, 500));
    results.push({
      total: response.body.hits.total,
      hits: response.body.hits.hits.map((hit: { _id: string; _source: unknown }) => [hit._id, hit._source]),
      aggregations: response.body.aggregations ?? null,
    });
  }
  const scored = await call(server, 'POST', `/${collection}/_search`, { json: SCORED });
  assert.equal(scored.status, 200, scored.text.slice(0, 500));
  results.push({ total: scored.body.hits.total, ids: scored.body.hits.hits.map((hit: { _id: string }) => hit._id).sort() });
  return results;
}

/** The collection's segments, sizes in bytes. */
export async function segmentsOf(server: TroveServer, collection: string): Promise<SegmentRow[]> {
  const response = await call(server, 'GET', `/_cat/segments/${collection}?format=json&bytes=b&h=index,shard,shard.uuid,segment,docs.count,docs.deleted,size`);
  assert.equal(response.status, 200, response.text);
  return response.body as SegmentRow[];
}

/** Sum of a numeric `_cat/segments` column. */
export function total(rows: readonly SegmentRow[], column: 'docs.count' | 'docs.deleted' | 'size'): number {
  return rows.reduce((sum, row) => sum + Number(row[column]), 0);
}

/** Waits until every live document of the collection is in a segment (epochs caught up). */
export async function waitForEpochs(server: TroveServer, collection: string, liveDocs: number): Promise<SegmentRow[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const rows = await segmentsOf(server, collection);
    if (total(rows, 'docs.count') === liveDocs) {
      // Field updates of segment documents reach disk (overlay and generation files) at a later
      // epoch: wait out more than one epoch interval and take the listing once it no longer changes.
      await sleep(3 * Number(COMPACTION_SETTINGS['epoch.interval_ms']));
      const settled = await segmentsOf(server, collection);
      if (JSON.stringify(settled) === JSON.stringify(rows)) return settled;
      continue;
    }
    await sleep(50);
  }
  throw new Error(`epochs did not put all ${liveDocs} documents of [${collection}] into segments`);
}

/** Polls `GET /_jobs/{id}` until the job is done or failed. */
export async function waitForJob(server: TroveServer, jobId: string): Promise<any> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const response = await call(server, 'GET', `/_jobs/${encodeURIComponent(jobId)}`);
    assert.equal(response.status, 200, response.text);
    if (response.body.state === 'done' || response.body.state === 'failed') return response.body;
    await sleep(50);
  }
  throw new Error(`job ${jobId} did not finish`);
}

/** Starts a compaction and returns its single row (one node). */
export async function compact(server: TroveServer, collection: string): Promise<any> {
  const response = await call(server, 'POST', `/${collection}/_compact`);
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.collection, collection);
  assert.equal(response.body.nodes.length, 1);
  return response.body.nodes[0];
}
