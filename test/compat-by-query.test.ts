/**
 * `_delete_by_query` and `_update_by_query` end to end through real HTTP: only matches change,
 * ES response fields, `ops` and `doc`, re-index without either, `max_docs`, small batches over two
 * shards, version conflicts under a concurrent writer (`conflicts=proceed` and `abort`),
 * `wait_for_completion=false` read through `GET /_jobs/{id}`, and 400s for bad requests.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = { properties: { kind: { type: 'keyword' }, views: { type: 'long', inplace: true }, n: { type: 'long' }, label: { type: 'keyword' } } };

async function fill(collection: string, count: number, kindOf: (i: number) => string): Promise<void> {
  const created = await call(server, 'PUT', `/${collection}`, { json: { settings: { number_of_shards: 2 }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let i = 0; i < count; i++) lines.push({ index: { _id: `d${i}` } }, { kind: kindOf(i), views: i, n: i });
  const bulk = await call(server, 'POST', `/${collection}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(bulk.body.errors, false, bulk.text);
}

async function countOf(collection: string, query: unknown = { match_all: {} }): Promise<number> {
  const response = await call(server, 'POST', `/${collection}/_count`, { json: { query } });
  return response.body.count;
}

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.cleanup();
});

test('delete_by_query removes only the matches, in batches, and answers the ES fields', async () => {
  await fill('dbq', 50, (i) => (i % 2 === 0 ? 'even' : 'odd'));
  const response = await call(server, 'POST', '/dbq/_delete_by_query?scroll_size=7&refresh=true', { json: { query: { term: { kind: 'even' } } } });
  assert.equal(response.status, 200, response.text);
  const body = response.body;
  assert.equal(body.total, 25);
  assert.equal(body.deleted, 25);
  assert.equal(body.timed_out, false);
  assert.equal(body.batches, 4, 'ceil(25 / 7) batches, as Elasticsearch counts');
  assert.equal(body.version_conflicts, 0);
  assert.equal(body.noops, 0);
  assert.deepEqual(body.retries, { bulk: 0, search: 0 });
  assert.equal(body.throttled_millis, 0);
  assert.equal(body.requests_per_second, -1);
  assert.equal(body.throttled_until_millis, 0);
  assert.deepEqual(body.failures, []);
  assert.equal(typeof body.took, 'number');
  assert.equal(await countOf('dbq'), 25);
  assert.equal(await countOf('dbq', { term: { kind: 'even' } }), 0);
  // Nothing matches any more: a second run deletes nothing.
  const again = await call(server, 'POST', '/dbq/_delete_by_query', { json: { query: { term: { kind: 'even' } } } });
  assert.equal(again.body.deleted, 0);
  assert.equal(again.body.total, 0);
});

test('delete_by_query without a body deletes everything; max_docs limits it', async () => {
  await fill('dbq-all', 30, () => 'x');
  const limited = await call(server, 'POST', '/dbq-all/_delete_by_query?scroll_size=4', { json: { max_docs: 10 } });
  assert.equal(limited.status, 200, limited.text);
  assert.equal(limited.body.deleted, 10);
  assert.equal(limited.body.total, 10);
  assert.equal(await countOf('dbq-all'), 20);
  const all = await call(server, 'POST', '/dbq-all/_delete_by_query');
  assert.equal(all.body.deleted, 20);
  assert.equal(await countOf('dbq-all'), 0);
});

test('update_by_query with ops (incr on an inplace field, set on a keyword) and with doc', async () => {
  await fill('ubq', 40, (i) => (i < 20 ? 'a' : 'b'));
  const response = await call(server, 'POST', '/ubq/_update_by_query?batch_size=6', {
    json: { query: { term: { kind: 'a' } }, ops: [{ op: 'incr', field: 'views', value: 100 }, { op: 'set', field: 'label', value: 'bumped' }] },
  });
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.updated, 20);
  assert.equal(response.body.deleted, 0);
  assert.equal(response.body.total, 20);
  assert.equal(response.body.version_conflicts, 0);
  assert.equal(await countOf('ubq', { term: { label: 'bumped' } }), 20);
  const doc = await call(server, 'GET', '/ubq/_doc/d3');
  assert.equal(doc.body._source.views, 103);
  const untouched = await call(server, 'GET', '/ubq/_doc/d30');
  assert.equal(untouched.body._source.views, 30);
  assert.equal(untouched.body._source.label, undefined);

  const merged = await call(server, 'POST', '/ubq/_update_by_query', { json: { query: { term: { kind: 'b' } }, doc: { label: 'from-doc' } } });
  assert.equal(merged.body.updated, 20);
  assert.equal(await countOf('ubq', { term: { label: 'from-doc' } }), 20);
  // The same doc again changes nothing: noops.
  const again = await call(server, 'POST', '/ubq/_update_by_query', { json: { query: { term: { kind: 'b' } }, doc: { label: 'from-doc' } } });
  assert.equal(again.body.noops, 20);
  assert.equal(again.body.updated, 0);

  // Neither ops nor doc: every match is re-indexed, its version bumped.
  const before = await call(server, 'GET', '/ubq/_doc/d25');
  const reindexed = await call(server, 'POST', '/ubq/_update_by_query?conflicts=proceed', { json: { query: { term: { kind: 'b' } } } });
  assert.equal(reindexed.body.updated, 20);
  const afterwards = await call(server, 'GET', '/ubq/_doc/d25');
  assert.equal(afterwards.body._version, before.body._version + 1);
  assert.deepEqual(afterwards.body._source, before.body._source);

  const limited = await call(server, 'POST', '/ubq/_update_by_query?max_docs=5', { json: { ops: [{ op: 'incr', field: 'n', value: 1 }] } });
  assert.equal(limited.body.updated, 5);
});

test('a concurrent writer causes version conflicts: proceed counts them, abort stops with failures', async () => {
  await fill('race', 200, () => 'r');
  let writing = true;
  const writer = (async () => {
    let writes = 0;
    while (writing && writes < 5000) {
      const id = `d${writes % 200}`;
      await call(server, 'POST', `/race/_update/${id}`, { json: { ops: [{ op: 'incr', field: 'n', value: 1 }] } });
      writes++;
    }
  })();
  let sawProceed = false;
  let sawAbort = false;
  try {
    for (let attempt = 0; attempt < 20 && !(sawProceed && sawAbort); attempt++) {
      const proceed = await call(server, 'POST', '/race/_update_by_query?conflicts=proceed&scroll_size=3', { json: { ops: [{ op: 'incr', field: 'views', value: 1 }] } });
      assert.equal(proceed.status, 200, proceed.text);
      assert.deepEqual(proceed.body.failures, []);
      assert.equal(proceed.body.updated + proceed.body.version_conflicts, 200);
      if (proceed.body.version_conflicts > 0) sawProceed = true;
      const abort = await call(server, 'POST', '/race/_update_by_query?scroll_size=3', { json: { ops: [{ op: 'incr', field: 'views', value: 1 }] } });
      if (abort.status === 409) {
        sawAbort = true;
        assert.ok(abort.body.version_conflicts > 0);
        assert.ok(abort.body.updated < 200);
        const failure = abort.body.failures[0];
        assert.equal(failure.index, 'race');
        assert.equal(failure.status, 409);
        assert.equal(failure.cause.type, 'version_conflict_engine_exception');
        assert.equal(typeof failure.id, 'string');
      } else assert.equal(abort.status, 200, abort.text);
    }
  } finally {
    writing = false;
    await writer;
  }
  assert.ok(sawProceed, 'a conflict under conflicts=proceed');
  assert.ok(sawAbort, 'a conflict under conflicts=abort');
});

test('wait_for_completion=false answers a task readable at GET /_jobs/{id}', async () => {
  await fill('async', 30, (i) => (i < 10 ? 'gone' : 'kept'));
  const started = await call(server, 'POST', '/async/_delete_by_query?wait_for_completion=false', { json: { query: { term: { kind: 'gone' } } } });
  assert.equal(started.status, 200, started.text);
  assert.equal(typeof started.body.task, 'string');
  let job: any;
  for (let i = 0; i < 100; i++) {
    job = (await call(server, 'GET', `/_jobs/${encodeURIComponent(started.body.task)}`)).body;
    if (job.state === 'done' || job.state === 'failed') break;
    await sleep(50);
  }
  assert.equal(job.state, 'done', JSON.stringify(job));
  assert.equal(job.type, 'delete_by_query');
  assert.equal(job.collection, 'async');
  assert.equal(job.status.deleted, 10);
  assert.deepEqual(job.status.failures, []);
  assert.equal(await countOf('async'), 20);
  const listed = await call(server, 'GET', '/_jobs?collection=async');
  assert.ok(listed.body.jobs.some((entry: any) => entry.job_id === started.body.task));
});

test('bad requests are 400s that change nothing', async () => {
  await fill('bad', 5, () => 'k');
  const cases: Array<[string, string, unknown, RegExp]> = [
    ['update', '', { script: { source: 'ctx._source.n++' } }, /\[script\] is not supported.*\[ops\].*\[doc\]/],
    ['update', '', { ops: [{ op: 'explode', field: 'n' }] }, /unknown op/],
    ['update', '', { ops: 'incr' }, /\[ops\] must be an array/],
    ['update', '', { doc: 3 }, /\[doc\] must be an object/],
    ['delete', '', { query: { nope: {} } }, /nope/],
    ['delete', '', { ops: [] }, /unknown field \[ops\]/],
    ['delete', '', { max_docs: 0 }, /maxDocs/],
    ['delete', '?slices=4', {}, /slices/],
    ['delete', '?requests_per_second=0', {}, /requests_per_second/],
    ['delete', '?conflicts=maybe', {}, /conflicts/],
    ['delete', '?scroll_size=20000', {}, /scroll_size/],
  ];
  for (const [kind, params, body, reason] of cases) {
    const response = await call(server, 'POST', `/bad/_${kind}_by_query${params}`, { json: body });
    assert.equal(response.status, 400, `${kind} ${params} ${JSON.stringify(body)}: ${response.text}`);
    assert.match(response.body.error.reason, reason);
  }
  const missing = await call(server, 'POST', '/nope/_delete_by_query', { json: {} });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.type, 'index_not_found_exception');
  assert.equal(await countOf('bad'), 5);
  // Accepted: one slice, unthrottled or a positive rate (honoured).
  const throttled = await call(server, 'POST', '/bad/_update_by_query?slices=auto&requests_per_second=20&scroll_size=2', { json: { doc: { label: 'slow' } } });
  assert.equal(throttled.status, 200, throttled.text);
  assert.equal(throttled.body.updated, 5);
  assert.equal(throttled.body.requests_per_second, 20);
  assert.ok(throttled.body.throttled_millis > 0);
});
