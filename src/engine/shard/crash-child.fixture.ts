/**
 * Test fixture process for crash.test.ts: writes documents to a shard, printing each acknowledged
 * id, updates fields of older documents (printing `upd <id>`), and runs epochs and merges; a fault
 * point (env TROVE_CRASH_AT) kills the process with SIGKILL from inside an epoch or merge, between
 * a field update's WAL append and its overlay, or in a merge that folds field overlays.
 */
import { writeSync } from 'node:fs';
import { Shard } from './shard.ts';

const dir = process.argv[2]!;
const crashAt = process.env.TROVE_CRASH_AT ?? '';
let segmentFiles = 0;
let fieldUpdates = 0;
let mergeFiles = 0;
const die = (): void => {
  // Said synchronously, so that the test knows the fault point (not its timer) killed the process.
  writeSync(1, `fault ${crashAt}\n`);
  process.kill(process.pid, 'SIGKILL');
};
const shard = await Shard.open({
  dir,
  uuid: 'crash',
  mapping: { properties: { body: { type: 'text' }, n: { type: 'long', inplace: true } } },
  settings: { epochIntervalMs: 3_600_000, epochMaxDocs: 400, mergeSegmentsPerTier: 3 },
  faults: {
    afterSegmentFile: () => {
      if (crashAt === 'segment-file' && ++segmentFiles === 3) die();
    },
    beforeManifest: () => {
      if (crashAt === 'manifest') die();
    },
    afterMergeFile: () => {
      if (crashAt === 'overlay-merge' && ++mergeFiles === 3) die();
    },
    afterFieldsAppend: () => {
      if (crashAt === 'fields' && ++fieldUpdates === 25) die();
    },
  },
});
let batch = 0;
for (;;) {
  const ops = Array.from({ length: 50 }, (_, index) => ({
    kind: 'index' as const,
    id: `p${process.pid}-${batch}-${index}`,
    source: { body: `document ${batch} ${index} words here`, n: index },
  }));
  const results = await shard.writeBatch(ops);
  process.stdout.write(results.map((result, index) => (result instanceof Error ? '' : `${ops[index]!.id}\n`)).join(''));
  await shard.write({ kind: 'update', id: `p${process.pid}-${batch}-0`, ops: [{ op: 'incr', field: 'n', value: 1000 }] });
  process.stdout.write(`inc p${process.pid}-${batch}-0\n`);
  if (batch >= 3) {
    // A document of an older batch, by now in a segment: its body is replaced by a field update.
    const id = `p${process.pid}-${batch - 3}-1`;
    await shard.write({ kind: 'update', id, ops: [{ op: 'set', field: 'body', value: `document ${batch - 3} 1 words here updated` }] });
    process.stdout.write(`upd ${id}\n`);
  }
  if (batch % 5 === 4) void shard.forceMerge({ maxSegments: 1 });
  batch++;
}
