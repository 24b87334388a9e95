import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseFaults } from '../node/faults.ts';
import { isTrashFaultPoint, TRASH_FAULT_POINTS } from './trash-faults.ts';

test('TROVE_FAULTS arms trash crash points by name and refuses unknown ones', () => {
  const faults = parseFaults('trash.delete.mid_move, trash.purge.after_commit');
  assert.deepEqual(faults.active, ['trash.delete.mid_move', 'trash.purge.after_commit']);
  faults.crashAt('trash.restore.mid_move');
  assert.throws(() => parseFaults('trash.delete.halfway'), /unknown fault point \[trash.delete.halfway\]/);
  assert.ok(TRASH_FAULT_POINTS.every(isTrashFaultPoint));
  assert.equal(isTrashFaultPoint('compaction.fail_node'), false);
});

test('reaching an armed point kills the process like kill -9', () => {
  const faultsModule = fileURLToPath(new URL('../node/faults.ts', import.meta.url));
  const script = `const { parseFaults } = await import(${JSON.stringify(faultsModule)});
    const faults = parseFaults('trash.restore.after_commit');
    faults.crashAt('trash.delete.after_commit');
    console.log('passed an unarmed point');
    faults.crashAt('trash.restore.after_commit');
    console.log('survived an armed point');`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(child.signal, 'SIGKILL');
  assert.match(child.stdout, /passed an unarmed point/);
  assert.doesNotMatch(child.stdout, /survived/);
});
