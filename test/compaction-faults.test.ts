/**
 * Compaction under injected faults (`TROVE_FAULTS`, read at start-up): a pass that fails fails its
 * job and leaves its shard as it was; a crash in the middle of a merge leaves a job record that
 * shows `failed` with a reason after the restart, and an intact shard; a node that refuses the
 * request yields a failed row while the request still answers 200.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, startServer, type TroveServer } from './harness.ts';
import {
  compact,
  COMPACTION_SETTINGS,
  importMail,
  searchSnapshot,
  segmentsOf,
  waitForEpochs,
  waitForJob,
  type SegmentRow,
} from './compaction.fixture.ts';

let server: TroveServer;
const live: Record<string, number> = {};
const snapshots: Record<string, unknown[]> = {};
const segmentsBefore: Record<string, SegmentRow[]> = {};

/** Restarts the server on the same data with these fault points (none when empty). */
async function restartWithFaults(points: string[]): Promise<void> {
  if (points.length > 0) process.env.TROVE_FAULTS = points.join(',');
  else delete process.env.TROVE_FAULTS;
  try {
    await server.restart();
  } finally {
    delete process.env.TROVE_FAULTS;
  }
}

function uuidOf(rows: readonly SegmentRow[], shard: number): string {
  const uuid = rows.find((row) => row.shard === String(shard))?.['shard.uuid'];
  assert.ok(uuid, `shard ${shard} has segments`);
  return uuid;
}

/** Every segment the shard had before is still there with the same counts: nothing was merged away. */
function assertUnmerged(before: readonly SegmentRow[], after: readonly SegmentRow[], shard: number): void {
  const key = (row: SegmentRow): string => `${row.segment} ${row['docs.count']} ${row['docs.deleted']}`;
  const remaining = new Set(after.filter((row) => row.shard === String(shard)).map(key));
  for (const row of before.filter((candidate) => candidate.shard === String(shard))) {
    assert.ok(remaining.has(key(row)), `segment ${row.segment} of shard ${shard} is intact`);
  }
}

before(async () => {
  server = await startServer({ settings: COMPACTION_SETTINGS });
  live.alpha = await importMail(server, 'alpha', 600, 2);
  live.bravo = await importMail(server, 'bravo', 400, 1);
  for (const name of ['alpha', 'bravo']) {
    segmentsBefore[name] = await waitForEpochs(server, name, live[name]!);
    snapshots[name] = await searchSnapshot(server, name);
  }
  await restartWithFaults([
    `compaction.fail_shard:${uuidOf(segmentsBefore.alpha!, 0)}`,
    `compaction.crash_shard:${uuidOf(segmentsBefore.bravo!, 0)}`,
  ]);
});

after(async () => {
  delete process.env.TROVE_FAULTS;
  await server?.cleanup();
});

test('a failed pass fails its job with the error and leaves that shard intact', async () => {
  const row = await compact(server, 'alpha');
  assert.equal(row.status, 'queued');
  assert.equal(row.primary_passes, 2);
  const job = await waitForJob(server, row.job_id);
  assert.equal(job.state, 'failed');
  assert.deepEqual(job.passes, { done: 1, failed: 1, total: 2 });
  assert.equal(job.error.type, 'fault_injected_exception');
  assert.match(job.error.reason, /1 of 2 passes failed; first: \[alpha\]\[0\] injected failure/);
  const [failedPass, donePass] = job.shards;
  assert.equal(failedPass.state, 'failed');
  assert.equal(failedPass.error.type, 'fault_injected_exception');
  assert.equal(failedPass.segments.after, null);
  assert.equal(donePass.state, 'done');

  const after = await segmentsOf(server, 'alpha');
  assertUnmerged(segmentsBefore.alpha!, after, 0);
  assert.equal(after.filter((segment) => segment.shard === '1').length, 1, 'the healthy shard was merged');
  assert.deepEqual(await searchSnapshot(server, 'alpha'), snapshots.alpha);
});

test('a crash in the middle of a merge: the job shows failed after the restart and the shard is intact', async () => {
  let jobId: string | null = null;
  try {
    const row = await compact(server, 'bravo');
    jobId = row.job_id;
  } catch {
    // The process may die before it answers; the job record is found below.
  }
  for (let attempt = 0; attempt < 200; attempt++) {
    const alive = await call(server, 'GET', '/').then(
      () => true,
      () => false,
    );
    if (!alive) break;
    await sleep(50);
  }
  await restartWithFaults(['compaction.fail_node']);

  const listed = await call(server, 'GET', '/_jobs?collection=bravo');
  assert.equal(listed.body.jobs.length, 1);
  const job = listed.body.jobs[0];
  if (jobId !== null) assert.equal(job.job_id, jobId);
  assert.equal(job.state, 'failed');
  assert.equal(job.error.type, 'job_interrupted_exception');
  assert.match(job.error.reason, /node stopped before the job finished/);
  assert.equal(job.shards[0].state, 'failed');
  assert.ok(job.finished_at);

  assertUnmerged(segmentsBefore.bravo!, await segmentsOf(server, 'bravo'), 0);
  assert.deepEqual(await searchSnapshot(server, 'bravo'), snapshots.bravo);
  const count = await call(server, 'GET', '/bravo/_count');
  assert.equal(count.body.count, live.bravo);

  const alphaJobs = await call(server, 'GET', '/_jobs?collection=alpha');
  assert.equal(alphaJobs.body.jobs[0].state, 'failed', 'finished job records survive the restart');
  assert.equal(alphaJobs.body.jobs[0].error.type, 'fault_injected_exception');
});

test('a node that fails yields a failed row with an ES error; the request still answers 200', async () => {
  const response = await call(server, 'POST', '/alpha/_compact');
  assert.equal(response.status, 200);
  const [row] = response.body.nodes;
  assert.equal(row.status, 'failed');
  assert.equal(typeof row.node_id, 'string');
  assert.equal(typeof row.node_name, 'string');
  assert.equal(row.job_id, undefined);
  assert.equal(row.error.type, 'fault_injected_exception');
  assert.match(row.error.reason, /refuses compaction requests/);
  assert.deepEqual(await searchSnapshot(server, 'alpha'), snapshots.alpha);
});
