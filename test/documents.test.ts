/**
 * Document APIs end to end: index/create/get/head/delete, optimistic concurrency, `_source`
 * filtering, `_mget`, `_count`, `_update`, and read-your-write visibility without refresh.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    title: { type: 'text' },
    tag: { type: 'keyword' },
    views: { type: 'long', inplace: true },
    price: { type: 'double' },
    published: { type: 'date' },
    meta: { type: 'object', properties: { author: { type: 'keyword' }, pages: { type: 'integer' } } },
  },
};

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/docs', { json: { mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(created.body, { acknowledged: true, shards_acknowledged: true, index: 'docs' });
});

after(async () => {
  await server?.cleanup();
});

function assertWriteEnvelope(body: Record<string, any>, id: string, result: string): void {
  assert.equal(body._index, 'docs');
  assert.equal(body._id, id);
  assert.equal(body.result, result);
  assert.equal(typeof body._version, 'number');
  assert.equal(typeof body._seq_no, 'number');
  assert.equal(typeof body._primary_term, 'number');
  assert.deepEqual(body._shards, { total: 1, successful: 1, failed: 0 });
}

describe('index, get, head, delete', () => {
  test('PUT creates (201) then overwrites (200) with increasing version and seq_no', async () => {
    const first = await call(server, 'PUT', '/docs/_doc/1', {
      json: { title: 'Quick brown fox', tag: 'animal', views: 1, price: 9.5, published: '2024-01-02', meta: { author: 'ann', pages: 10 } },
    });
    assert.equal(first.status, 201, first.text);
    assertWriteEnvelope(first.body, '1', 'created');
    assert.equal(first.body._version, 1);
    const second = await call(server, 'PUT', '/docs/_doc/1?refresh=true', {
      json: { title: 'Quick brown fox jumps', tag: 'animal', views: 2, price: 9.5, published: '2024-01-02', meta: { author: 'ann', pages: 12 } },
    });
    assert.equal(second.status, 200, second.text);
    assertWriteEnvelope(second.body, '1', 'updated');
    assert.equal(second.body._version, 2);
    assert.ok(second.body._seq_no > first.body._seq_no);
  });

  test('POST _doc generates an id', async () => {
    const response = await call(server, 'POST', '/docs/_doc', { json: { title: 'generated', tag: 'gen' } });
    assert.equal(response.status, 201, response.text);
    assert.equal(typeof response.body._id, 'string');
    assert.ok(response.body._id.length >= 16);
    const fetched = await call(server, 'GET', `/docs/_doc/${encodeURIComponent(response.body._id)}`);
    assert.equal(fetched.status, 200);
    assert.equal(fetched.body._source.title, 'generated');
  });

  test('GET returns the ES document envelope; missing is 404 found:false', async () => {
    const found = await call(server, 'GET', '/docs/_doc/1');
    assert.equal(found.status, 200);
    assert.equal(found.body.found, true);
    assert.equal(found.body._id, '1');
    assert.equal(found.body._index, 'docs');
    assert.equal(found.body._version, 2);
    assert.equal(typeof found.body._seq_no, 'number');
    assert.equal(found.body._primary_term, 1);
    assert.equal(found.body._source.title, 'Quick brown fox jumps');
    const missing = await call(server, 'GET', '/docs/_doc/nope');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { _index: 'docs', _id: 'nope', found: false });
  });

  test('HEAD answers 200 or 404 without a body', async () => {
    const found = await call(server, 'HEAD', '/docs/_doc/1');
    assert.equal(found.status, 200);
    assert.equal(found.text, '');
    const missing = await call(server, 'HEAD', '/docs/_doc/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.text, '');
    assert.equal((await call(server, 'HEAD', '/docs')).status, 200);
    assert.equal((await call(server, 'HEAD', '/no-such-collection')).status, 404);
  });

  test('_source filtering on GET: false, list, includes, excludes, wildcards, _source endpoint', async () => {
    const none = await call(server, 'GET', '/docs/_doc/1?_source=false');
    assert.equal(none.body.found, true);
    assert.equal(none.body._source, undefined);
    const list = await call(server, 'GET', '/docs/_doc/1?_source=title,tag');
    assert.deepEqual(list.body._source, { title: 'Quick brown fox jumps', tag: 'animal' });
    const includes = await call(server, 'GET', '/docs/_doc/1?_source_includes=meta.*,price');
    assert.deepEqual(includes.body._source, { price: 9.5, meta: { author: 'ann', pages: 12 } });
    const excludes = await call(server, 'GET', '/docs/_doc/1?_source_excludes=meta,title,published');
    assert.deepEqual(excludes.body._source, { tag: 'animal', views: 2, price: 9.5 });
    const sourceOnly = await call(server, 'GET', '/docs/_source/1?_source_includes=tag');
    assert.equal(sourceOnly.status, 200);
    assert.deepEqual(sourceOnly.body, { tag: 'animal' });
    assert.equal((await call(server, 'GET', '/docs/_source/nope')).status, 404);
  });

  test('DELETE removes (200 deleted), a second DELETE is 404 not_found', async () => {
    await call(server, 'PUT', '/docs/_doc/gone', { json: { title: 'temporary' } });
    const deleted = await call(server, 'DELETE', '/docs/_doc/gone');
    assert.equal(deleted.status, 200, deleted.text);
    assertWriteEnvelope(deleted.body, 'gone', 'deleted');
    const again = await call(server, 'DELETE', '/docs/_doc/gone');
    assert.equal(again.status, 404);
    assert.equal(again.body.result, 'not_found');
    assert.equal((await call(server, 'GET', '/docs/_doc/gone')).status, 404);
  });

  test('routing is accepted on write and read', async () => {
    const written = await call(server, 'PUT', '/docs/_doc/routed?routing=user-7', { json: { title: 'routed doc' } });
    assert.equal(written.status, 201, written.text);
    const read = await call(server, 'GET', '/docs/_doc/routed?routing=user-7');
    assert.equal(read.body.found, true);
  });
});

describe('create and optimistic concurrency', () => {
  test('op_type=create and _create on an existing id are 409; on a new id 201', async () => {
    const conflict = await call(server, 'PUT', '/docs/_doc/1?op_type=create', { json: { title: 'dup' } });
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.body.error.type, 'version_conflict_engine_exception');
    assert.equal(conflict.body.status, 409);
    const viaEndpoint = await call(server, 'PUT', '/docs/_create/1', { json: { title: 'dup' } });
    assert.equal(viaEndpoint.status, 409);
    const fresh = await call(server, 'PUT', '/docs/_create/c1', { json: { title: 'created once' } });
    assert.equal(fresh.status, 201, fresh.text);
    assert.equal(fresh.body.result, 'created');
    const postCreate = await call(server, 'POST', '/docs/_create/c2', { json: { title: 'created by post' } });
    assert.equal(postCreate.status, 201);
    assert.equal((await call(server, 'GET', '/docs/_doc/1')).body._source.title, 'Quick brown fox jumps');
  });

  test('if_seq_no + if_primary_term: stale is 409 and changes nothing, current succeeds', async () => {
    const current = await call(server, 'GET', '/docs/_doc/c1');
    const { _seq_no: seqNo, _primary_term: term } = current.body;
    const stale = await call(server, 'PUT', `/docs/_doc/c1?if_seq_no=${seqNo + 100}&if_primary_term=${term}`, {
      json: { title: 'stale write' },
    });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.error.type, 'version_conflict_engine_exception');
    assert.equal((await call(server, 'GET', '/docs/_doc/c1')).body._source.title, 'created once');
    const fresh = await call(server, 'PUT', `/docs/_doc/c1?if_seq_no=${seqNo}&if_primary_term=${term}`, {
      json: { title: 'guarded write' },
    });
    assert.equal(fresh.status, 200, fresh.text);
    const replay = await call(server, 'PUT', `/docs/_doc/c1?if_seq_no=${seqNo}&if_primary_term=${term}`, {
      json: { title: 'replayed write' },
    });
    assert.equal(replay.status, 409);
    const staleDelete = await call(server, 'DELETE', `/docs/_doc/c1?if_seq_no=${seqNo}&if_primary_term=${term}`);
    assert.equal(staleDelete.status, 409);
    assert.equal((await call(server, 'GET', '/docs/_doc/c1')).body._source.title, 'guarded write');
  });
});

describe('_mget and _count', () => {
  test('_mget by docs and by ids, with missing docs and unknown collections per item', async () => {
    const response = await call(server, 'POST', '/_mget', {
      json: {
        docs: [
          { _index: 'docs', _id: '1' },
          { _index: 'docs', _id: 'missing' },
          { _index: 'no-such-collection', _id: '1' },
          { _index: 'docs', _id: 'c2', _source: ['title'] },
        ],
      },
    });
    assert.equal(response.status, 200, response.text);
    const [one, missing, unknown, filtered] = response.body.docs;
    assert.equal(one.found, true);
    assert.equal(one._source.tag, 'animal');
    assert.deepEqual(missing, { _index: 'docs', _id: 'missing', found: false });
    assert.equal(unknown._index, 'no-such-collection');
    assert.equal(unknown.error.type, 'index_not_found_exception');
    assert.deepEqual(filtered._source, { title: 'created by post' });
    const byIds = await call(server, 'POST', '/docs/_mget?_source_includes=tag', { json: { ids: ['1', 'missing'] } });
    assert.equal(byIds.status, 200);
    assert.deepEqual(byIds.body.docs[0]._source, { tag: 'animal' });
    assert.equal(byIds.body.docs[1].found, false);
  });

  test('_count with a query, with q=, and without a body; unknown collection is 404', async () => {
    await call(server, 'PUT', '/counted', {});
    for (let index = 0; index < 7; index++) {
      await call(server, 'PUT', `/counted/_doc/${index}`, { json: { kind: index % 2 === 0 ? 'even' : 'odd', n: index } });
    }
    const all = await call(server, 'GET', '/counted/_count');
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.count, 7);
    assert.equal(all.body._shards.failed, 0);
    const even = await call(server, 'POST', '/counted/_count', { json: { query: { term: { 'kind.keyword': 'even' } } } });
    assert.equal(even.body.count, 4);
    const byQ = await call(server, 'GET', '/counted/_count?q=kind:odd');
    assert.equal(byQ.body.count, 3);
    const range = await call(server, 'POST', '/counted/_count', { json: { query: { range: { n: { gte: 5 } } } } });
    assert.equal(range.body.count, 2);
    const unknown = await call(server, 'GET', '/nowhere/_count');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.type, 'index_not_found_exception');
  });
});

describe('_update', () => {
  test('doc merge, ops, noop, upsert, missing document', async () => {
    await call(server, 'PUT', '/docs/_doc/u1', { json: { title: 'update me', tag: 'u', views: 10, meta: { author: 'bo' } } });
    const merged = await call(server, 'POST', '/docs/_update/u1', { json: { doc: { meta: { pages: 3 } } } });
    assert.equal(merged.status, 200, merged.text);
    assertWriteEnvelope(merged.body, 'u1', 'updated');
    let source = (await call(server, 'GET', '/docs/_doc/u1')).body._source;
    assert.deepEqual(source.meta, { author: 'bo', pages: 3 });

    const incremented = await call(server, 'POST', '/docs/_update/u1', {
      json: { ops: [{ op: 'incr', field: 'views', value: 5 }, { op: 'set', field: 'tag', value: 'v' }] },
    });
    assert.equal(incremented.status, 200, incremented.text);
    source = (await call(server, 'GET', '/docs/_doc/u1')).body._source;
    assert.equal(source.views, 15);
    assert.equal(source.tag, 'v');
    const searched = await call(server, 'POST', '/docs/_search', { json: { query: { range: { views: { gte: 15 } } } } });
    assert.ok(searched.body.hits.hits.some((hit: { _id: string }) => hit._id === 'u1'));

    const noop = await call(server, 'POST', '/docs/_update/u1', { json: { doc: { tag: 'v' } } });
    assert.equal(noop.status, 200);
    assert.equal(noop.body.result, 'noop');

    const badOp = await call(server, 'POST', '/docs/_update/u1', { json: { ops: [{ op: 'explode', field: 'views' }] } });
    assert.equal(badOp.status, 400, badOp.text);
    assert.equal((await call(server, 'GET', '/docs/_doc/u1')).body._source.views, 15);

    const missing = await call(server, 'POST', '/docs/_update/absent', { json: { doc: { tag: 'x' } } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.type, 'document_missing_exception');

    const upserted = await call(server, 'POST', '/docs/_update/absent', { json: { doc: { tag: 'x' }, doc_as_upsert: true } });
    assert.equal(upserted.status, 201, upserted.text);
    assert.equal(upserted.body.result, 'created');
    assert.equal((await call(server, 'GET', '/docs/_doc/absent')).body._source.tag, 'x');
  });
});

describe('visibility without refresh', () => {
  test('a write is visible to the very next search', async () => {
    for (let round = 0; round < 20; round++) {
      const id = `visible-${round}`;
      await call(server, 'PUT', `/docs/_doc/${id}`, { json: { title: `needle${round}`, tag: 'vis' } });
      const found = await call(server, 'POST', '/docs/_search', { json: { query: { match: { title: `needle${round}` } } } });
      assert.equal(found.body.hits.total.value, 1, `round ${round}`);
      assert.equal(found.body.hits.hits[0]._id, id);
    }
    const counted = await call(server, 'POST', '/docs/_count', { json: { query: { term: { tag: 'vis' } } } });
    assert.equal(counted.body.count, 20);
  });
});
