/**
 * TEST HELPER: creates collections of the same documents with different shard counts (so a suite
 * can check that one and several shards agree) and loads them through `_bulk`, refreshed.
 */
import assert from 'node:assert/strict';
import { call, ndjson, type TroveServer } from './harness.ts';

/** Creates each `[name, shards]` collection with `mappings` and indexes `documents` as `b1`, `b2`, …. */
export async function loadShardedCollections(server: TroveServer, collections: ReadonlyArray<readonly [string, number]>, mappings: unknown, documents: readonly unknown[]): Promise<void> {
  for (const [name, shards] of collections) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings } });
    assert.equal(created.status, 200, created.text);
    const body = ndjson(documents.flatMap((document, index) => [{ index: { _id: `b${index + 1}` } }, document]));
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
}
