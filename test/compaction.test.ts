/**
 * Manual compaction end to end: after a bulk import with deletions and updates, `POST
 * /{collection}/_compact` merges every shard down to one segment and purges the deleted documents
 * while search results stay identical; the job is visible in `GET /_jobs`; a second request while
 * one runs is queued behind it; writes and searches during compaction all succeed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';
import {
  bulk,
  compact,
  COMPACTION_SETTINGS,
  importMail,
  searchSnapshot,
  segmentsOf,
  total,
  waitForEpochs,
  waitForJob,
} from './compaction.fixture.ts';

let server: TroveServer;
let liveDocs: number;

before(async () => {
  server = await startServer({ settings: COMPACTION_SETTINGS });
  liveDocs = await importMail(server, 'mail', 1000, 2);
});

after(async () => {
  await server?.cleanup();
});

test('compaction reduces segments and purges deleted documents; search results stay identical', async () => {
  const before = await waitForEpochs(server, 'mail', liveDocs);
  const deletedBefore = total(before, 'docs.deleted');
  assert.ok(before.length > 2, `expected several segments per shard, got ${before.length}`);
  assert.ok(deletedBefore > 0, 'the deletions and updates left deleted documents in segments');
  const snapshot = await searchSnapshot(server, 'mail');

  const row = await compact(server, 'mail');
  assert.equal(row.status, 'queued');
  assert.equal(row.primary_passes, 2);
  assert.equal(typeof row.node_id, 'string');
  assert.equal(typeof row.node_name, 'string');
  assert.match(row.job_id, new RegExp(`^${row.node_id}:\\d+$`));

  const job = await waitForJob(server, row.job_id);
  assert.equal(job.state, 'done', JSON.stringify(job));
  assert.equal(job.type, 'compaction');
  assert.equal(job.collection, 'mail');
  assert.deepEqual(job.passes, { done: 2, failed: 0, total: 2 });
  assert.equal(job.segments.before, before.length);
  assert.equal(job.segments.after, 2);
  assert.equal(job.deleted_docs_purged, deletedBefore);
  assert.equal(job.bytes.before, total(before, 'size'));
  assert.ok(job.bytes.after < job.bytes.before, `bytes ${job.bytes.before} → ${job.bytes.after}`);
  for (const field of ['created_at', 'started_at', 'finished_at']) assert.ok(!Number.isNaN(Date.parse(job[field])), field);
  assert.ok(job.took_ms >= 0);
  assert.equal(job.error, undefined);
  assert.deepEqual(job.shards.map((pass: { shard: number; state: string }) => [pass.shard, pass.state]), [[0, 'done'], [1, 'done']]);

  const after = await segmentsOf(server, 'mail');
  assert.equal(after.length, 2, 'one segment per shard');
  assert.equal(total(after, 'docs.deleted'), 0);
  assert.equal(total(after, 'docs.count'), liveDocs);
  assert.deepEqual(await searchSnapshot(server, 'mail'), snapshot);

  const listed = await call(server, 'GET', '/_jobs?state=done&collection=mail');
  assert.equal(listed.status, 200);
  assert.ok(listed.body.jobs.some((listedJob: { job_id: string }) => listedJob.job_id === row.job_id));
  const none = await call(server, 'GET', '/_jobs?collection=other');
  assert.deepEqual(none.body, { jobs: [] });
});

test('a second request while one runs is queued; writes and searches during compaction all succeed', async () => {
  const base = Number((await call(server, 'GET', '/mail/_count')).body.count);
  let stop = false;
  const timeline: Array<{ kind: 'write' | 'search'; at: number }> = [];
  const failures: string[] = [];
  let written = 0;
  const writer = async (writerId: number): Promise<void> => {
    for (let batch = 0; !stop; batch++) {
      const lines: unknown[] = [];
      for (let index = 0; index < 50; index++) {
        const id = `live-${writerId}-${batch}-${index}`;
        lines.push({ index: { _id: id } }, { mid: id, group: 'live', subject: `live write ${batch}`, body: `written during compaction by ${writerId}` });
      }
      try {
        await bulk(server, 'mail', lines);
        written += 50;
        timeline.push({ kind: 'write', at: Date.now() });
      } catch (error) {
        failures.push(`write: ${(error as Error).message}`);
      }
    }
  };
  const searcher = async (): Promise<void> => {
    while (!stop) {
      const response = await call(server, 'POST', '/mail/_search', { json: { query: { match: { body: 'compaction money' } }, size: 5 } });
      if (response.status === 200) timeline.push({ kind: 'search', at: Date.now() });
      else failures.push(`search: ${response.status} ${response.text.slice(0, 200)}`);
    }
  };
  const load = [writer(1), writer(2), searcher()];

  const first = await compact(server, 'mail');
  const second = await compact(server, 'mail');
  assert.equal(first.status, 'queued');
  assert.equal(second.status, 'queued');
  assert.notEqual(first.job_id, second.job_id);
  const firstJob = await waitForJob(server, first.job_id);
  const secondJob = await waitForJob(server, second.job_id);
  stop = true;
  await Promise.all(load);

  assert.deepEqual(failures, []);
  assert.equal(firstJob.state, 'done', JSON.stringify(firstJob));
  assert.equal(secondJob.state, 'done', JSON.stringify(secondJob));
  for (const [index, pass] of secondJob.shards.entries()) {
    assert.ok(Date.parse(pass.started_at) >= Date.parse(firstJob.shards[index].finished_at), `shard ${index}: the second pass waited for the first`);
  }
  const windowStart = Date.parse(firstJob.started_at);
  const windowEnd = Date.parse(secondJob.finished_at);
  const during = timeline.filter((entry) => entry.at >= windowStart && entry.at <= windowEnd);
  assert.ok(during.some((entry) => entry.kind === 'search'), 'searches completed while compaction ran');
  assert.ok(during.some((entry) => entry.kind === 'write'), 'writes completed while compaction ran');

  const counted = await call(server, 'GET', '/mail/_count');
  assert.equal(counted.body.count, base + written, 'no acknowledged write was lost');
  const live = await call(server, 'POST', '/mail/_count', { json: { query: { term: { group: 'live' } } } });
  assert.equal(live.body.count, written);
});

test('compaction and jobs requests that cannot be served answer with ES errors', async () => {
  const missing = await call(server, 'POST', '/nope/_compact');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.type, 'index_not_found_exception');

  const withBody = await call(server, 'POST', '/mail/_compact', { json: { max_num_segments: 1 } });
  assert.equal(withBody.status, 400);
  assert.match(withBody.body.error.reason, /unknown field \[max_num_segments\]/);

  const badParameter = await call(server, 'POST', '/mail/_compact?max_num_segments=0');
  assert.equal(badParameter.status, 400);

  const unknownJob = await call(server, 'GET', '/_jobs/someone:12345');
  assert.equal(unknownJob.status, 404);
  assert.equal(unknownJob.body.error.type, 'resource_not_found_exception');

  const badState = await call(server, 'GET', '/_jobs?state=sleeping');
  assert.equal(badState.status, 400);

  const hostileId = await call(server, 'GET', `/_jobs/${encodeURIComponent('../../node.json\u0000')}`);
  assert.equal(hostileId.status, 404);
  const longId = await call(server, 'GET', `/_jobs/${'x'.repeat(500)}`);
  assert.equal(longId.status, 400);

  const malformed = await call(server, 'POST', '/mail/_compact', { body: '{"oops', headers: { 'content-type': 'application/json' } });
  assert.equal(malformed.status, 400);
  const emptyJson = await call(server, 'POST', '/mail/_compact', { body: '', headers: { 'content-type': 'application/json' } });
  assert.equal(emptyJson.status, 200);
  assert.equal((await waitForJob(server, emptyJson.body.nodes[0].job_id)).state, 'done');

  const wrongMethod = await call(server, 'GET', '/mail/_compact');
  assert.equal(wrongMethod.status, 405);
});

test('_cat/segments renders a text table with a header and selected columns', async () => {
  const table = await call(server, 'GET', '/_cat/segments?v');
  assert.equal(table.status, 200);
  const lines = table.text.trimEnd().split('\n');
  assert.deepEqual(lines[0]!.split(/\s+/), ['index', 'shard', 'prirep', 'node', 'segment', 'generation', 'docs.count', 'docs.deleted', 'size', 'committed', 'searchable']);
  assert.ok(lines.slice(1).every((line) => line.startsWith('mail ')));

  const picked = await call(server, 'GET', '/_cat/segments/ma*?h=shard,docs.deleted&s=shard:desc');
  assert.equal(picked.status, 200);
  const shardColumn = picked.text.trimEnd().split('\n').map((line) => line.trim().split(/\s+/)[0]);
  assert.equal(shardColumn[0], '1');
  assert.equal(shardColumn.at(-1), '0');

  const none = await call(server, 'GET', '/_cat/segments/other?format=json');
  assert.deepEqual(none.body, []);

  const unknownColumn = await call(server, 'GET', '/_cat/segments?h=nope');
  assert.equal(unknownColumn.status, 400);
});
