/**
 * Shared steps of the trash suites: a collection with full-text, keyword and inplace fields,
 * loaded with inserts, full updates, inplace increments and deletions; a snapshot of everything a
 * restore must give back (search results, counts, mapping, documents with their inplace values,
 * the change feed, the shard UUIDs on disk); and readers of the trash listing and data directory.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, type TroveServer } from './harness.ts';

const MAPPINGS = {
  properties: {
    title: { type: 'text' },
    genre: { type: 'keyword' },
    pop: { type: 'long', inplace: true },
  },
};
const GENRES = ['sf', 'crime', 'poetry'];

/** Creates `name` (optionally in a namespace) and loads `count` books with updates and deletions. */
export async function seedBooks(server: TroveServer, name: string, options: { shards?: number; count?: number; namespace?: string } = {}): Promise<void> {
  const count = options.count ?? 30;
  const created = await call(server, 'PUT', `/${name}`, {
    json: { ...(options.namespace ? { namespace: options.namespace } : {}), settings: { number_of_shards: options.shards ?? 2 }, mappings: MAPPINGS },
  });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let book = 0; book < count; book++) {
    lines.push({ index: { _id: `b${book}` } }, { title: `the ${book % 2 === 0 ? 'red' : 'blue'} book number ${book}`, genre: GENRES[book % 3], pop: book });
  }
  const loaded = await call(server, 'POST', `/${name}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
  for (let book = 0; book < count; book += 4) {
    const updated = await call(server, 'POST', `/${name}/_update/b${book}`, { json: { ops: [{ op: 'incr', field: 'pop', value: 1000 }] } });
    assert.equal(updated.status, 200, updated.text);
  }
  assert.equal((await call(server, 'POST', `/${name}/_update/b1`, { json: { doc: { title: 'a rewritten red book' } } })).status, 200);
  assert.equal((await call(server, 'DELETE', `/${name}/_doc/b3`)).status, 200);
}

/** Everything a restore must give back, as seen through HTTP. */
export interface CollectionState {
  count: number;
  mapping: unknown;
  topByScore: Array<[string, number]>;
  topByPop: Array<[string, unknown]>;
  aggregation: unknown;
  documents: unknown[];
  changes: { lastSeq: string; results: unknown[] };
}

/** Reads the state of a collection (see `CollectionState`). */
export async function collectionState(server: TroveServer, name: string): Promise<CollectionState> {
  const count = await call(server, 'GET', `/${name}/_count`);
  assert.equal(count.status, 200, count.text);
  const mapping = await call(server, 'GET', `/${name}/_mapping`);
  const byScore = await call(server, 'POST', `/${name}/_search`, { json: { query: { match: { title: 'red book' } }, size: 10 } });
  const byPop = await call(server, 'POST', `/${name}/_search`, {
    json: { query: { match_all: {} }, sort: [{ pop: 'desc' }], size: 10, aggs: { genres: { terms: { field: 'genre' } } } },
  });
  const documents = [];
  for (const id of ['b0', 'b1', 'b3', 'b8']) {
    const document = await call(server, 'GET', `/${name}/_doc/${id}`);
    documents.push({ found: document.body.found, source: document.body._source, version: document.body._version, seqNo: document.body._seq_no });
  }
  const feed = await call(server, 'GET', `/${name}/_changes?limit=1000`);
  assert.equal(feed.status, 200, feed.text.slice(0, 300));
  const parsed = JSON.parse(feed.text);
  return {
    count: count.body.count,
    mapping: mapping.body[name].mappings,
    topByScore: byScore.body.hits.hits.map((hit: { _id: string; _score: number }) => [hit._id, hit._score]),
    topByPop: byPop.body.hits.hits.map((hit: { _id: string; sort: unknown[] }) => [hit._id, hit.sort[0]]),
    aggregation: byPop.body.aggregations,
    documents,
    changes: { lastSeq: parsed.last_seq, results: parsed.results },
  };
}

/**
 * The state once background epochs started by the last writes are done (an epoch drops deleted
 * documents from the layer it freezes, which moves BM25 statistics): read until two reads agree.
 */
export async function settledState(server: TroveServer, name: string): Promise<CollectionState> {
  let previous = await collectionState(server, name);
  for (let attempt = 0; attempt < 20; attempt++) {
    await sleep(150);
    const current = await collectionState(server, name);
    if (isDeepStrictEqual(current, previous)) return current;
    previous = current;
  }
  throw new Error(`the state of [${name}] kept changing`);
}

/** One item of `GET /_cluster/trash`. */
export interface ListedItem {
  item_id: string;
  kind: string;
  name: string;
  namespace: string;
  state: string;
  deleted_at_millis: number;
  expires_at_millis: number;
  summary: { collections: number; shards: number; documents: number; bytes: number; segments: number };
  collections: Array<{ name: string; uuid: string; shards: number; documents: number }>;
}

/** Every item of the trash listing, whatever its namespace. */
export async function trashItems(server: TroveServer): Promise<ListedItem[]> {
  const listed = await call(server, 'GET', '/_cluster/trash');
  assert.equal(listed.status, 200, listed.text);
  return Object.values(listed.body.namespaces as Record<string, { items: ListedItem[] }>).flatMap((group) => group.items);
}

/** The listed item with this id, or undefined. */
export async function trashItem(server: TroveServer, itemId: string): Promise<ListedItem | undefined> {
  return (await trashItems(server)).find((item) => item.item_id === itemId);
}

/** Shard directories (UUIDs) under `<path.data>/shards`. */
export async function liveShardDirs(server: TroveServer): Promise<string[]> {
  return (await readdir(join(server.dataDir, 'shards')).catch(() => [] as string[])).sort();
}

/** Shard directories (UUIDs) held by a trash item on disk. */
export async function trashedShardDirs(server: TroveServer, itemId: string): Promise<string[]> {
  return (await readdir(join(server.dataDir, 'trash', itemId, 'shards')).catch(() => [] as string[])).sort();
}

/** True when the trash item's directory exists. */
export function itemOnDisk(server: TroveServer, itemId: string): boolean {
  return existsSync(join(server.dataDir, 'trash', itemId));
}

/** Size, modification, access and change time of every file under a directory (recursively). */
export async function fileTimes(dir: string): Promise<Record<string, [number, number, number, number]>> {
  const out: Record<string, [number, number, number, number]> = {};
  for (const entry of await readdir(dir, { recursive: true })) {
    const info = await stat(join(dir, entry));
    out[entry] = [info.size, info.mtimeMs, info.atimeMs, info.ctimeMs];
  }
  return out;
}
