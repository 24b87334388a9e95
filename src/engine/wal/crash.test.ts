import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CRASH_SEGMENT_BYTES, crashPayload } from './crash-child.fixture.ts';
import { WriteAheadLog } from './wal.ts';

const CHILD = fileURLToPath(new URL('./crash-child.fixture.ts', import.meta.url));
const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ROUNDS = 3;

/** What one child reported before it was killed. */
interface ChildReport {
  openedAt: number;
  durable: number[];
  highestRemoval: number;
}

/** Runs the child until it reports a durable batch, then kills it with SIGKILL at a random moment. */
function runAndKill(dir: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const report: ChildReport = { openedAt: -1, durable: [], highestRemoval: 0 };
    let stdout = '';
    let stderr = '';
    let killTimer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (killTimer === undefined && stdout.includes('durable ')) {
        killTimer = setTimeout(() => child.kill('SIGKILL'), 50 + Math.random() * 400);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(giveUp);
      clearTimeout(killTimer);
      if (signal !== 'SIGKILL' || killTimer === undefined) {
        reject(new Error(`child ended with code ${code} signal ${signal}: ${stderr}`));
        return;
      }
      for (const line of stdout.split('\n')) {
        const [kind, value] = line.split(' ');
        if (value === undefined) continue;
        if (kind === 'open') report.openedAt = Number(value);
        else if (kind === 'durable') report.durable.push(Number(value));
        else if (kind === 'remove') report.highestRemoval = Math.max(report.highestRemoval, Number(value));
      }
      resolve(report);
    });
  });
}

describe('WriteAheadLog under SIGKILL', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-wal-crash-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps every record reported durable, contiguous and intact', { timeout: 60_000 }, async () => {
    let previousLastSeq = 0;
    let highestRemoval = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const report = await runAndKill(dir);
      assert.equal(report.openedAt, previousLastSeq, 'the child reopened where the last check ended');
      assert.ok(report.durable.length > 0);
      highestRemoval = Math.max(highestRemoval, report.highestRemoval);
      const highestDurable = Math.max(...report.durable);

      const wal = await WriteAheadLog.open({ dir, segmentBytes: CRASH_SEGMENT_BYTES });
      assert.ok(
        wal.lastSeq >= highestDurable,
        `lost acknowledged seq ${highestDurable}, log ends at ${wal.lastSeq}`,
      );
      assert.ok(wal.firstSeq <= highestRemoval + 1, `removed more than asked: log starts at ${wal.firstSeq}`);
      let expected = wal.firstSeq;
      for (const record of wal.replay(0)) {
        assert.equal(record.seq, expected, 'seqs are contiguous without duplicates');
        assert.ok(record.payload.equals(crashPayload(record.seq)), `payload of seq ${record.seq} is intact`);
        expected += 1;
      }
      assert.equal(expected, wal.lastSeq + 1, 'replay reaches the last seq');
      previousLastSeq = wal.lastSeq;
      await wal.close();
    }
  });
});
