/**
 * TEST HELPER: creates collections of the same documents with different shard counts (so a suite
 * can check that one and several shards agree) and loads them through `_bulk`, refreshed; reads
 * their hits and checks that the one-shard and three-shard copies agree.
 */
import assert from 'node:assert/strict';
import { call, ndjson, type TroveServer } from './harness.ts';

/** Creates each `[name, shards]` collection with `mappings` and indexes `documents` as `b1`, `b2`, …. */
export async function loadShardedCollections(server: TroveServer, collections: ReadonlyArray<readonly [string, number]>, mappings: unknown, documents: readonly unknown[]): Promise<void> {
  await loadKeyedCollections(server, collections, mappings, Object.fromEntries(documents.map((document, index) => [`b${index + 1}`, document])));
}

/** Creates each `[name, shards]` collection with `mappings` and indexes `documents` under their keys as ids. */
export async function loadKeyedCollections(server: TroveServer, collections: ReadonlyArray<readonly [string, number]>, mappings: unknown, documents: Readonly<Record<string, unknown>>): Promise<void> {
  for (const [name, shards] of collections) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings } });
    assert.equal(created.status, 200, created.text);
    const body = ndjson(Object.entries(documents).flatMap(([id, document]) => [{ index: { _id: id } }, document]));
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
}

/** A search hit as these suites read it. */
export interface Hit {
  _id: string;
  _score: number;
}

/** The top 20 hits of `query` on `collection`. */
export async function searchHits(server: TroveServer, query: unknown, collection = 'books'): Promise<Hit[]> {
  const response = await call(server, 'POST', `/${collection}/_search`, { json: { query, size: 20 } });
  assert.equal(response.status, 200, response.text);
  return response.body.hits.hits;
}

/** Sorted ids of the hits on `books`, checked to be the same on its three-shard copy `books3`. */
export async function idsOnOneAndThreeShards(server: TroveServer, query: unknown): Promise<string[]> {
  const one = (await searchHits(server, query)).map((hit) => hit._id).sort();
  const three = (await searchHits(server, query, 'books3')).map((hit) => hit._id).sort();
  assert.deepEqual(three, one, `three shards: ${JSON.stringify(query)}`);
  return one;
}

/** The search answers of `body` on every collection, the first returned; their hit ids agree (in order when the body sorts). */
export async function sameAnswerOn(server: TroveServer, collections: readonly string[], body: Record<string, unknown>): Promise<any> {
  const answers: any[] = [];
  for (const name of collections) {
    const response = await call(server, 'POST', `/${name}/_search`, { json: body });
    assert.equal(response.status, 200, `${name} ${JSON.stringify(body)}: ${response.text}`);
    answers.push(response.body);
  }
  const order = (answer: any): string[] => answer.hits.hits.map((hit: { _id: string }) => hit._id);
  for (const answer of answers.slice(1)) {
    if (body.sort !== undefined) assert.deepEqual(order(answer), order(answers[0]), JSON.stringify(body));
    else assert.deepEqual(order(answer).sort(), order(answers[0]).sort(), JSON.stringify(body));
  }
  return answers[0];
}
