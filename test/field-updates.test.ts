/**
 * Field-level updates end to end: operators on every field type through `_update` on a two-shard
 * collection give the same hits, scores, sort values, aggregations, `_source`, versions and
 * change-feed entries as the same documents written whole into a second collection; the state
 * survives epochs, merges, kill -9, restart, and the trash and back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    title: { type: 'text' },
    body: { type: 'text' },
    tag: { type: 'keyword' },
    label: { type: 'keyword' },
    tags: { type: 'keyword' },
    n: { type: 'long' },
    price: { type: 'double' },
    when: { type: 'date' },
    flag: { type: 'boolean' },
    views: { type: 'long', inplace: true },
    meta: { type: 'object', properties: { note: { type: 'text' }, rank: { type: 'integer' } } },
  },
};
const WORDS = ['river', 'stone', 'cloud', 'ember', 'frost', 'grove', 'harbor', 'island'];
const DOCS = 24;

function documentFor(index: number): Record<string, unknown> {
  const word = (offset: number): string => WORDS[(index * 3 + offset) % WORDS.length]!;
  return {
    title: `${word(0)} ${word(1)}`,
    body: Array.from({ length: 20 + (index % 7) }, (_, position) => word(position)).join(' '),
    tag: ['red', 'green', 'blue'][index % 3],
    tags: [word(2), word(4)],
    n: index,
    price: index * 1.5,
    when: `2024-01-${String(1 + (index % 28)).padStart(2, '0')}T00:00:00Z`,
    flag: index % 2 === 0,
    views: index * 10,
    meta: { note: `${word(5)} note`, rank: index % 4 },
  };
}

/** The operators of the test, on every field type; `current_date` is left out so that both collections hold the same values. */
function operationsFor(index: number): Array<{ op: string; field: string; value?: unknown }> {
  const all = [
    { op: 'set', field: 'tag', value: 'amber' },
    { op: 'append', field: 'title', value: 'harbor lights' },
    { op: 'add_to_set', field: 'tags', value: 'ember' },
    { op: 'incr', field: 'n', value: 100 },
    { op: 'mul', field: 'price', value: 3 },
    { op: 'max', field: 'when', value: '2024-06-30T00:00:00Z' },
    { op: 'min', field: 'meta.rank', value: 0 },
    { op: 'toggle', field: 'flag' },
    { op: 'unset', field: 'body' },
    { op: 'rename', field: 'tag', value: 'label' },
    { op: 'set', field: 'meta.note', value: 'frost frost grove' },
    { op: 'incr', field: 'views', value: 1 },
  ];
  return [all[index % all.length]!, all[(index * 5 + 3) % all.length]!];
}

before(async () => {
  server = await startServer({ settings: { 'epoch.max_docs': '10', 'merge.segments_per_tier': '2' } });
  for (const name of ['updated', 'rewritten']) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: 2 }, mappings: MAPPINGS } });
    assert.equal(created.status, 200, created.text);
  }
});

after(async () => {
  await server?.cleanup();
});

const SEARCHES: Array<Record<string, unknown>> = [
  { query: { match: { title: 'harbor river' } } },
  { query: { match: { body: 'stone cloud' } } },
  { query: { match: { 'meta.note': 'frost' } } },
  { query: { term: { tag: 'amber' } } },
  { query: { exists: { field: 'label' } } },
  { query: { terms: { tags: ['ember', 'grove'] } } },
  { query: { range: { n: { gte: 100 } } } },
  { query: { range: { price: { gte: 20 } } } },
  { query: { term: { flag: true } } },
  { query: { range: { when: { gte: '2024-06-01' } } } },
  { query: { match_all: {} }, sort: [{ price: 'desc' }, { n: 'asc' }] },
  { query: { match_all: {} }, sort: [{ when: 'asc' }, { views: 'desc' }, { n: 'asc' }] },
  {
    query: { match_all: {} },
    size: 0,
    aggs: { tag: { terms: { field: 'tag' } }, tags: { terms: { field: 'tags' } }, n: { stats: { field: 'n' } }, rank: { sum: { field: 'meta.rank' } }, views: { max: { field: 'views' } } },
  },
];

async function searchBoth(search: Record<string, unknown>): Promise<[unknown, unknown]> {
  const results = await Promise.all(
    ['updated', 'rewritten'].map(async (name) => {
      const response = await call(server, 'POST', `/${name}/_search`, { json: { size: 50, ...search } });
      assert.equal(response.status, 200, response.text);
      const hits = (response.body.hits.hits as Array<{ _id: string; _score: number | null; sort?: unknown[] }>)
        .map((hit) => ({ id: hit._id, score: hit._score, sort: hit.sort }))
        .sort((a, b) => (search.sort ? 0 : (b.score ?? 0) - (a.score ?? 0) || (a.id < b.id ? -1 : 1)));
      return { total: response.body.hits.total, hits, aggregations: response.body.aggregations };
    }),
  );
  return [results[0], results[1]];
}

async function compareCollections(where: string): Promise<void> {
  for (let index = 0; index < DOCS; index++) {
    const [updated, rewritten] = await Promise.all(['updated', 'rewritten'].map((name) => call(server, 'GET', `/${name}/_doc/d${index}`)));
    assert.deepEqual(updated!.body._source, rewritten!.body._source, `${where}: d${index} source`);
  }
  for (const search of SEARCHES) {
    const [updated, rewritten] = await searchBoth(search);
    assert.deepEqual(updated, rewritten, `${where}: ${JSON.stringify(search)}`);
  }
}

test('field updates on every field type give what writing the whole documents gives, through restarts', async () => {
  for (const name of ['updated', 'rewritten']) {
    for (let index = 0; index < DOCS; index++) {
      const put = await call(server, 'PUT', `/${name}/_doc/d${index}`, { json: documentFor(index) });
      assert.equal(put.status, 201, put.text);
    }
  }
  for (let round = 0; round < 3; round++) {
    for (let index = round; index < DOCS; index += 2) {
      const before = await call(server, 'GET', `/updated/_doc/d${index}`);
      const response = await call(server, 'POST', `/updated/_update/d${index}`, { json: { ops: operationsFor(index + round) } });
      assert.equal(response.status, 200, response.text);
      if (response.body.result === 'noop') continue;
      assert.equal(response.body.result, 'updated');
      assert.equal(response.body._version, before.body._version + 1);
      assert.ok(response.body._seq_no > before.body._seq_no);
      // The reference collection gets the document as a whole, as a re-index would write it.
      const now = await call(server, 'GET', `/updated/_doc/d${index}`);
      assert.equal(now.body._version, response.body._version);
      const rewritten = await call(server, 'PUT', `/rewritten/_doc/d${index}`, { json: now.body._source });
      assert.equal(rewritten.status, 200, rewritten.text);
    }
  }
  // A full re-index keeps the deleted copies in the statistics until a merge purges them.
  await call(server, 'POST', '/rewritten/_forcemerge?max_num_segments=1');
  await compareCollections('after the updates');

  const changes = await call(server, 'GET', '/updated/_changes?since=0');
  assert.equal(changes.status, 200, changes.text);
  const updates = (changes.body.results as Array<{ id: string; op: string; version: number }>).filter((entry) => entry.op === 'update');
  assert.ok(updates.length >= DOCS, `field updates appear in the change feed as updates (${updates.length})`);
  for (const entry of updates.slice(-5)) assert.ok(entry.version >= 2);

  await server.kill('SIGKILL');
  await server.restart();
  await compareCollections('after kill -9 and restart');

  // Overlays not yet merged travel with the shard files through the trash.
  const deleted = await call(server, 'DELETE', '/updated');
  assert.equal(deleted.status, 200, deleted.text);
  const trash = await call(server, 'GET', '/_cluster/trash');
  const item = (trash.body.namespaces.default.items as Array<{ item_id: string; name: string }>).find((entry) => entry.name === 'updated')!;
  const verified = await call(server, 'POST', `/_cluster/trash/${item.item_id}/_verify`);
  assert.equal(verified.body.complete, true, verified.text);
  const restored = await call(server, 'POST', `/_cluster/trash/${item.item_id}/_restore`);
  assert.equal(restored.status, 200, restored.text);
  await compareCollections('after trash and restore');

  await call(server, 'POST', '/updated/_forcemerge?max_num_segments=1');
  await compareCollections('after the overlays are merged in');
  await server.restart();
  await compareCollections('after a clean restart');
});

test('a field update refused by the mapping is a 400 that changes nothing', async () => {
  const before = await call(server, 'GET', '/updated/_doc/d1');
  for (const ops of [[{ op: 'set', field: 'n', value: 'many' }], [{ op: 'incr', field: 'title', value: 1 }], [{ op: 'set', field: 'flag', value: { nested: 1 } }]]) {
    const response = await call(server, 'POST', '/updated/_update/d1', { json: { ops } });
    assert.equal(response.status, 400, response.text);
  }
  const after = await call(server, 'GET', '/updated/_doc/d1');
  assert.deepEqual(after.body, before.body);
});
