/**
 * A shard worker thread dies under write load (the `worker.exit_after_writes` fault point makes
 * each worker of the first generation exit at its n-th write request). Every request is recorded:
 * the ones in flight on the dying worker fail with 503 `shard_worker_failure_exception`, the
 * node stays up, the pool restarts the worker, the shards reopen from their WAL, and every
 * acknowledged write is then readable with its acknowledged version and seq, searchable, and in
 * the change feed exactly once. The check is repeated after a restart of the whole node.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const WRITERS = 6;
const WRITES_PER_WRITER = 70;
const DEADLINE_MS = 120_000;

interface Acked {
  id: string;
  n: number;
  version: number;
  seqNo: number;
}

before(async () => {
  server = await startServer({ settings: { 'node.shard_workers': '2' }, env: { TROVE_FAULTS: 'worker.exit_after_writes:120' } });
  const created = await call(server, 'PUT', '/load', {
    json: { settings: { number_of_shards: 2 }, mappings: { properties: { writer: { type: 'keyword' }, n: { type: 'long' }, body: { type: 'text' } } } },
  });
  assert.equal(created.status, 200, created.text);
});

after(async () => {
  await server?.cleanup();
});

/** Runs the load: single-document writes, every tenth request a bulk of three. */
async function load(): Promise<{ acked: Map<string, Acked>; failures: Array<{ status: number; type: string }> }> {
  const acked = new Map<string, Acked>();
  const failures: Array<{ status: number; type: string }> = [];
  const started = Date.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; n < WRITES_PER_WRITER && Date.now() - started < DEADLINE_MS; n++) {
        if (n % 10 === 9) {
          const ids = [0, 1, 2].map((part) => `w${writer}-${n}-${part}`);
          const lines = ids.flatMap((id) => [{ index: { _id: id } }, { writer: `w${writer}`, n, body: `bulk write ${n} of writer ${writer}` }]);
          const response = await call(server, 'POST', '/load/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
          assert.equal(response.status, 200, response.text);
          for (const item of response.body.items as Array<{ index: { _id: string; status: number; _version?: number; _seq_no?: number; error?: { type: string } } }>) {
            if (item.index.status < 300) acked.set(item.index._id, { id: item.index._id, n, version: item.index._version!, seqNo: item.index._seq_no! });
            else failures.push({ status: item.index.status, type: item.index.error!.type });
          }
          continue;
        }
        const id = `w${writer}-${n}`;
        const response = await call(server, 'PUT', `/load/_doc/${id}`, { json: { writer: `w${writer}`, n, body: `single write ${n} of writer ${writer}` } });
        if (response.status < 300) acked.set(id, { id, n, version: response.body._version, seqNo: response.body._seq_no });
        else failures.push({ status: response.status, type: response.body?.error?.type });
      }
    }),
  );
  return { acked, failures };
}

/** Every acknowledged write is readable as acknowledged, counted by search, and in the feed once. */
async function checkAcknowledged(acked: Map<string, Acked>): Promise<void> {
  const ids = [...acked.keys()];
  for (let start = 0; start < ids.length; start += 200) {
    const batch = ids.slice(start, start + 200);
    const response = await call(server, 'POST', '/load/_mget', { json: { ids: batch } });
    assert.equal(response.status, 200, response.text);
    for (const doc of response.body.docs as Array<{ _id: string; found: boolean; _version: number; _seq_no: number; _source: { n: number } }>) {
      const expected = acked.get(doc._id)!;
      assert.equal(doc.found, true, `acknowledged ${doc._id} is present`);
      assert.deepEqual([doc._version, doc._seq_no, doc._source.n], [expected.version, expected.seqNo, expected.n], `acknowledged ${doc._id} is as acknowledged`);
    }
  }
  const counted = await call(server, 'POST', '/load/_count', { json: { query: { match_all: {} } } });
  assert.ok(counted.body.count >= acked.size, `search counts ${counted.body.count} of ${acked.size} acknowledged writes`);
  const feed = await call(server, 'GET', '/load/_changes?since=0');
  assert.equal(feed.status, 200, feed.text);
  const seen = new Map<string, number>();
  for (const change of feed.body.results as Array<{ id: string }>) seen.set(change.id, (seen.get(change.id) ?? 0) + 1);
  for (const id of ids) assert.equal(seen.get(id), 1, `the change feed holds acknowledged ${id} exactly once`);
}

test('a worker thread that dies fails only its in-flight writes with 503; nothing acknowledged is lost', async () => {
  const { acked, failures } = await load();
  assert.ok(failures.length >= 1, 'the fault point made a worker exit under load');
  for (const failure of failures) assert.deepEqual(failure, { status: 503, type: 'shard_worker_failure_exception' });
  assert.ok(acked.size > WRITERS * WRITES_PER_WRITER * 0.8, `most writes were acknowledged (${acked.size})`);
  assert.ok(server.output().includes('worker'), 'the worker failure is logged');
  assert.equal((await call(server, 'GET', '/')).status, 200, 'the node is still up');

  const after = await call(server, 'PUT', '/load/_doc/after-restart', { json: { writer: 'late', n: 1, body: 'written after the worker came back' } });
  assert.equal(after.status, 201, after.text);
  acked.set('after-restart', { id: 'after-restart', n: 1, version: after.body._version, seqNo: after.body._seq_no });
  await checkAcknowledged(acked);

  await server.kill('SIGKILL');
  await server.restart();
  await checkAcknowledged(acked);
});
