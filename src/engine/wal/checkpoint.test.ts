import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { EngineError } from '../errors.ts';
import { FILE_HEADER_BYTES } from './wal-file.ts';
import { WriteAheadLog, type WalCheckpoint, type WalRecord } from './wal.ts';

const directories: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-wal-checkpoint-'));
  directories.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Small files: a few batches each, so that a checkpoint spans sealed files and part of the active one. */
const SEGMENT_BYTES = 2048;

function payload(seq: number): Buffer {
  return Buffer.from(`record-${seq}-`.padEnd(40, String.fromCharCode(97 + (seq % 26))));
}

/** Appends seqs `from`..`to` in batches of ten (one group each). */
async function appendRange(wal: WriteAheadLog, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += 10) {
    const batch: Buffer[] = [];
    for (let seq = start; seq <= Math.min(to, start + 9); seq++) batch.push(payload(seq));
    await wal.append(batch).durable;
  }
}

function logFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((name) => name.endsWith('.wal')).sort();
}

/** The file holding `seq` and the offset of its frame, found by walking the frames' lengths. */
function frameOf(dir: string, seq: number): { file: string; offset: number } {
  for (const name of logFiles(dir)) {
    const bytes = fs.readFileSync(path.join(dir, name));
    for (let offset = FILE_HEADER_BYTES; offset + 16 <= bytes.length; offset += 8 + bytes.readUInt32LE(offset)) {
      if (bytes.readUInt32LE(offset + 8) === seq) return { file: path.join(dir, name), offset };
    }
  }
  throw new Error(`no frame for seq ${seq}`);
}

/** Flips a byte in the payload of the record `seq`, so that its checksum no longer matches. */
function corruptPayload(dir: string, seq: number): string {
  const { file, offset } = frameOf(dir, seq);
  const fd = fs.openSync(file, 'r+');
  const byte = Buffer.alloc(1);
  fs.readSync(fd, byte, 0, 1, offset + 30);
  byte[0] = byte[0]! ^ 0xff;
  fs.writeSync(fd, byte, 0, 1, offset + 30);
  fs.closeSync(fd);
  return path.basename(file);
}

function seqs(records: readonly WalRecord[]): number[] {
  return records.map((record) => record.seq);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

/** A log of 1..260 with a checkpoint taken at 150 (in the middle of a file, after sealed ones). */
async function logWithCheckpoint(): Promise<{ dir: string; checkpoint: WalCheckpoint }> {
  const dir = tempDir();
  const wal = await WriteAheadLog.open({ dir, segmentBytes: SEGMENT_BYTES });
  await appendRange(wal, 1, 155);
  const checkpoint = wal.checkpoint(150);
  await appendRange(wal, 156, 260);
  await wal.close();
  return { dir, checkpoint };
}

describe('WriteAheadLog checkpoints', () => {
  it('lists every file holding records up to the checkpoint, the last one up to the checkpoint frame', async () => {
    const { dir, checkpoint } = await logWithCheckpoint();
    const files = logFiles(dir);
    assert.ok(checkpoint.files.length >= 2, 'sealed files and the file holding seq 150');
    assert.deepEqual(checkpoint.files.map((file) => file.name), files.slice(0, checkpoint.files.length));
    const last = checkpoint.files.at(-1)!;
    const frame = frameOf(dir, 150);
    assert.equal(last.lastSeq, 150);
    assert.equal(last.lastOffset, frame.offset);
    assert.equal(last.bytes, frameOf(dir, 151).offset, 'ends where the next frame starts');
    for (const sealed of checkpoint.files.slice(0, -1)) {
      assert.equal(sealed.bytes, fs.statSync(path.join(dir, sealed.name)).size);
    }
    const wal = await WriteAheadLog.open({ dir });
    assert.throws(() => wal.checkpoint(261), (error) => error instanceof EngineError && error.code === 'illegal_argument');
    await wal.close();
  });

  it('opens without reading the records below the checkpoint, and reads them back on demand', async () => {
    const { dir, checkpoint } = await logWithCheckpoint();
    // A damaged record below the checkpoint is not noticed at open (opening never reads it) ...
    const damaged = corruptPayload(dir, 25);
    const wal = await WriteAheadLog.open({ dir, checkpoint });
    assert.equal(wal.firstSeq, 1);
    assert.equal(wal.lastSeq, 260);
    assert.deepEqual(seqs(wal.readRange(151, 1000)), range(151, 260));
    assert.deepEqual(seqs(wal.readRange(1, 24)), range(1, 24));
    assert.deepEqual(seqs(wal.readRange(100, 20)), range(100, 119), 'from the middle of a run opening skipped');
    // ... but reading it fails, naming the file, instead of returning it.
    assert.throws(
      () => wal.readRange(22, 10),
      (error) => error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes(damaged),
    );
    assert.deepEqual(wal.checkpoint(150), checkpoint, 'the same checkpoint is taken again after reopening');
    await wal.close();
    // Without the checkpoint, recovery keeps the intact prefix as it always did.
    const scanned = await WriteAheadLog.open({ dir });
    assert.equal(scanned.lastSeq, 24);
    await scanned.close();
  });

  it('still truncates a torn or corrupt tail past the checkpoint', async () => {
    const { dir, checkpoint } = await logWithCheckpoint();
    corruptPayload(dir, 230);
    const wal = await WriteAheadLog.open({ dir, checkpoint });
    assert.equal(wal.lastSeq, 229);
    assert.deepEqual(seqs(wal.readRange(140, 1000)), range(140, 229));
    await wal.close();
    const active = path.join(dir, logFiles(dir).at(-1)!);
    fs.truncateSync(active, fs.statSync(active).size - 7);
    const torn = await WriteAheadLog.open({ dir, checkpoint });
    assert.equal(torn.lastSeq, 228);
    assert.equal(torn.durableFiles().at(-1)!.bytes, fs.statSync(active).size, 'the torn frame is cut off');
    await torn.close();
  });

  it('scans a file whose checkpoint does not fit it, as without one', async () => {
    // The last frame of a sealed file damaged, and the frame of the active one not where recorded.
    const damaged = await logWithCheckpoint();
    const last = damaged.checkpoint.files.at(-1)!;
    corruptPayload(damaged.dir, damaged.checkpoint.files[0]!.lastSeq);
    const shifted: WalCheckpoint = { files: [...damaged.checkpoint.files.slice(0, -1), { ...last, lastOffset: last.lastOffset + 1 }] };
    const wal = await WriteAheadLog.open({ dir: damaged.dir, checkpoint: shifted });
    assert.equal(wal.lastSeq, damaged.checkpoint.files[0]!.lastSeq - 1, 'the damaged frame was found by scanning its file');
    await wal.close();
    const { dir, checkpoint } = await logWithCheckpoint();
    const misplaced = await WriteAheadLog.open({ dir, checkpoint: shifted });
    assert.equal(misplaced.lastSeq, 260);
    assert.deepEqual(seqs(misplaced.readRange(1, 1000)), range(1, 260));
    await misplaced.close();
    // A file cut below the checkpoint (as a copy cut short would be) is recovered by scanning it.
    fs.truncateSync(path.join(dir, last.name), frameOf(dir, 140).offset + 5);
    const cut = await WriteAheadLog.open({ dir, checkpoint });
    assert.equal(cut.lastSeq, 139);
    assert.deepEqual(logFiles(dir).at(-1), last.name, 'the files after it are deleted');
    await cut.close();
    const garbage = { files: [null, 7, { name: last.name, bytes: 'x' }] } as unknown as WalCheckpoint;
    const reopened = await WriteAheadLog.open({ dir, checkpoint: garbage });
    assert.equal(reopened.lastSeq, 139);
    await reopened.close();
  });

  it('keeps the append times of skipped files, so retention removes the same files as after a full scan', async () => {
    const { dir, checkpoint } = await logWithCheckpoint();
    const copy = tempDir();
    for (const name of logFiles(dir)) fs.copyFileSync(path.join(dir, name), path.join(copy, name));
    const skipping = await WriteAheadLog.open({ dir, checkpoint });
    const scanning = await WriteAheadLog.open({ dir: copy });
    assert.deepEqual(skipping.durableFiles(), scanning.durableFiles());
    assert.deepEqual(skipping.stats(), scanning.stats());
    assert.equal(await skipping.removeUpTo(150, 0), 0, 'nothing was appended before 1970');
    assert.equal(await scanning.removeUpTo(150, 0), 0);
    const removed = await skipping.removeUpTo(150, Date.now());
    assert.ok(removed > 0);
    assert.equal(await scanning.removeUpTo(150, Date.now()), removed);
    assert.deepEqual(skipping.durableFiles(), scanning.durableFiles());
    assert.deepEqual(seqs(skipping.readRange(1, 1000)), seqs(scanning.readRange(1, 1000)));
    await skipping.close();
    await scanning.close();
    // A checkpoint naming files that were removed since still opens the remaining ones.
    const after = await WriteAheadLog.open({ dir, checkpoint });
    assert.equal(after.lastSeq, 260);
    await after.close();
  });
});
