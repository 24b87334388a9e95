import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import CRC32C from 'crc-32/crc32c.js';
import { EngineError } from '../errors.ts';
import { FRAME_OVERHEAD_BYTES } from './frame.ts';
import { FILE_HEADER_BYTES, WAL_FORMAT_VERSION, walFileName } from './wal-file.ts';
import { WriteAheadLog, type WalRecord } from './wal.ts';

const directories: string[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-wal-'));
  directories.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function payload(seq: number, length = 20): Buffer {
  return Buffer.from(`record-${seq}-`.padEnd(length, String.fromCharCode(97 + (seq % 26))));
}

function logFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((name) => name.endsWith('.wal')).sort();
}

function seqs(records: Iterable<WalRecord>): number[] {
  return [...records].map((record) => record.seq);
}

async function appendEach(wal: WriteAheadLog, from: number, to: number, length = 20): Promise<void> {
  const batch: Buffer[] = [];
  for (let seq = from; seq <= to; seq++) batch.push(payload(seq, length));
  await wal.append(batch).durable;
}

function isWalFailure(error: unknown): boolean {
  return error instanceof EngineError && error.code === 'wal_failure';
}

describe('WriteAheadLog', () => {
  it('round-trips records across a reopen and continues the seq', async () => {
    const dir = path.join(tempDir(), 'nested', 'wal');
    const wal = await WriteAheadLog.open({ dir });
    assert.equal(wal.lastSeq, 0);
    assert.equal(wal.firstSeq, 1);
    const before = Date.now();
    const first = wal.append([payload(1), payload(2)]);
    const second = wal.append([payload(3)]);
    assert.equal(first.firstSeq, 1);
    assert.equal(second.firstSeq, 3);
    assert.equal(wal.lastSeq, 3);
    assert.ok(first.timestamp >= before);
    await Promise.all([first.durable, second.durable]);
    assert.equal(wal.durableSeq, 3);
    const records = wal.readRange(1, 10);
    assert.deepEqual(seqs(records), [1, 2, 3]);
    assert.deepEqual(records[2]!.payload, payload(3));
    assert.equal(records[0]!.timestamp, first.timestamp);
    await wal.close();
    assert.throws(() => wal.append([payload(4)]), { code: 'shard_closed' });

    const reopened = await WriteAheadLog.open({ dir });
    assert.equal(reopened.lastSeq, 3);
    assert.equal(reopened.durableSeq, 3);
    const replayed = [...reopened.replay(2)];
    assert.deepEqual(seqs(replayed), [2, 3]);
    assert.deepEqual(replayed[0]!.payload, payload(2));
    assert.equal(reopened.append([payload(4)]).firstSeq, 4);
    await reopened.sync();
    assert.deepEqual(seqs(reopened.replay(0)), [1, 2, 3, 4]);
    assert.equal(reopened.stats().bytes, FILE_HEADER_BYTES + 4 * (FRAME_OVERHEAD_BYTES + 20));
    await reopened.close();
  });

  it('commits concurrent appends in far fewer fsyncs', async () => {
    const wal = await WriteAheadLog.open({ dir: tempDir() });
    const burst = [];
    for (let seq = 1; seq <= 500; seq++) burst.push(wal.append([payload(seq)]).durable);
    await Promise.all(burst);
    assert.equal(wal.stats().fsyncs, 1);

    const spread = [];
    for (let seq = 501; seq <= 3000; seq++) {
      spread.push(wal.append([payload(seq)]).durable);
      if (seq % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(spread);
    const { fsyncs, durableSeq } = wal.stats();
    assert.equal(durableSeq, 3000);
    assert.ok(fsyncs < 2500 / 10, `expected group commit, got ${fsyncs} fsyncs for 2500 appends`);
    assert.deepEqual(seqs(wal.readRange(1, 5000)), Array.from({ length: 3000 }, (_, index) => index + 1));
    await wal.close();
  });

  it('recovers from a torn tail by truncating it', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir });
    await appendEach(wal, 1, 10);
    await wal.close();
    const file = path.join(dir, walFileName(1));
    const intactSize = FILE_HEADER_BYTES + 9 * (FRAME_OVERHEAD_BYTES + 20);
    fs.truncateSync(file, fs.statSync(file).size - 3);

    const reopened = await WriteAheadLog.open({ dir });
    assert.equal(reopened.lastSeq, 9);
    assert.equal(fs.statSync(file).size, intactSize);
    assert.deepEqual(seqs(reopened.replay(1)), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const next = reopened.append([payload(10, 30)]);
    assert.equal(next.firstSeq, 10);
    await next.durable;
    assert.deepEqual(reopened.readRange(10, 1)[0]!.payload, payload(10, 30));
    await reopened.close();
  });

  it('stops at a corrupt frame in the middle of the last file', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir });
    await appendEach(wal, 1, 10);
    await wal.close();
    const file = path.join(dir, walFileName(1));
    const frameBytes = FRAME_OVERHEAD_BYTES + 20;
    const corruptFrameStart = FILE_HEADER_BYTES + 5 * frameBytes;
    const bytes = fs.readFileSync(file);
    bytes[corruptFrameStart + FRAME_OVERHEAD_BYTES + 4]! ^= 0x40;
    fs.writeFileSync(file, bytes);

    const reopened = await WriteAheadLog.open({ dir });
    assert.equal(reopened.lastSeq, 5);
    assert.deepEqual(seqs(reopened.replay(1)), [1, 2, 3, 4, 5]);
    assert.equal(fs.statSync(file).size, corruptFrameStart);
    assert.equal(reopened.append([payload(6)]).firstSeq, 6);
    await reopened.close();
  });

  it('rotates files and removes whole files below a seq, never the active one', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    for (let seq = 1; seq <= 100; seq += 10) await appendEach(wal, seq, seq + 9, 40);
    const names = logFiles(dir);
    assert.equal(names.length, 5);
    assert.deepEqual(names.slice(0, 3), [walFileName(1), walFileName(21), walFileName(41)]);
    assert.equal(wal.stats().files, 5);

    assert.equal(await wal.removeUpTo(30), 1);
    assert.equal(wal.firstSeq, 21);
    assert.deepEqual(logFiles(dir), names.slice(1));
    assert.deepEqual(seqs(wal.readRange(1, 3)), [21, 22, 23]);
    assert.equal(await wal.removeUpTo(1000), 3);
    assert.equal(wal.stats().files, 1);
    assert.equal(wal.firstSeq, 81);
    await wal.close();

    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    assert.equal(reopened.firstSeq, 81);
    assert.equal(reopened.lastSeq, 100);
    assert.deepEqual(seqs(reopened.replay(0)), Array.from({ length: 20 }, (_, index) => 81 + index));
    await reopened.close();
  });

  it('holds a descriptor of its own only for the active file, after rotation and after reopening (issue 12 item 5)', { skip: process.platform !== 'linux' }, async () => {
    const dir = tempDir();
    const openHere = (): number => fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
      } catch {
        return false;
      }
    }).length;
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    for (let seq = 1; seq <= 200; seq += 10) await appendEach(wal, seq, seq + 9, 40);
    assert.equal(wal.stats().files, 10);
    assert.equal(openHere(), 1, 'the active file only');
    assert.deepEqual(seqs(wal.readRange(1, 200)), Array.from({ length: 200 }, (_, index) => index + 1), 'older files read through the cache');
    assert.ok(openHere() <= 1 + 9 && openHere() >= 1);
    await wal.close();
    assert.equal(openHere(), 0, 'close releases cached descriptors too');
    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    assert.equal(openHere(), 1, 'recovery keeps only the newest file open');
    assert.equal(seqs(reopened.replay(0)).length, 200);
    await reopened.close();
    assert.equal(openHere(), 0);
  });

  it('removes only files whose records were all appended by the given time, also after reopening', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    for (let seq = 1; seq <= 40; seq += 10) await appendEach(wal, seq, seq + 9, 40);
    const firstBatchEnd = Date.now();
    while (Date.now() === firstBatchEnd) await new Promise((resolve) => setTimeout(resolve, 1));
    for (let seq = 41; seq <= 100; seq += 10) await appendEach(wal, seq, seq + 9, 40);
    assert.equal(await wal.removeUpTo(1000, firstBatchEnd - 60_000), 0);
    await wal.close();

    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    assert.equal(await reopened.removeUpTo(1000, firstBatchEnd), 2);
    assert.equal(reopened.firstSeq, 41);
    assert.equal(await reopened.removeUpTo(60, Date.now()), 1);
    assert.equal(reopened.firstSeq, 61);
    await reopened.close();
  });

  it('keeps the seq when every record is removed and the active file is empty', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 100 });
    for (let seq = 1; seq <= 5; seq++) await appendEach(wal, seq, seq, 200);
    assert.equal(await wal.removeUpTo(10), 4);
    await wal.close();
    const active = path.join(dir, logFiles(dir)[0]!);
    fs.truncateSync(active, FILE_HEADER_BYTES);
    const reopened = await WriteAheadLog.open({ dir });
    assert.equal(reopened.firstSeq, 5);
    assert.equal(reopened.lastSeq, 4);
    assert.deepEqual(reopened.readRange(0, 10), []);
    assert.equal(reopened.append([payload(5)]).firstSeq, 5);
    await reopened.close();
  });

  it('reads ranges across files, including records larger than a read window', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 64 * 1024 });
    const large = Buffer.alloc(300 * 1024, 7);
    for (let seq = 1; seq <= 3000; seq += 100) await appendEach(wal, seq, seq + 99, 100);
    const big = wal.append([large]);
    await big.durable;
    await appendEach(wal, 3002, 3010);
    assert.ok(wal.stats().files > 3);

    const middle = Array.from({ length: 10 }, (_, index) => 1495 + index);
    assert.deepEqual(seqs(wal.readRange(1495, 10)), middle);
    const across = wal.readRange(200, 2700);
    assert.equal(across.length, 2700);
    assert.equal(across[0]!.seq, 200);
    assert.equal(across[2699]!.seq, 2899);
    for (const record of across) assert.deepEqual(record.payload, payload(record.seq, 100));
    const tail = wal.readRange(3000, 100);
    assert.deepEqual(seqs(tail), [3000, 3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008, 3009, 3010]);
    assert.deepEqual(tail[1]!.payload, large);
    assert.deepEqual(wal.readRange(3011, 10), []);
    assert.deepEqual(wal.readRange(5, 0), []);
    await wal.close();

    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 64 * 1024 });
    assert.equal(reopened.lastSeq, 3010);
    assert.deepEqual(reopened.readRange(3001, 1)[0]!.payload, large);
    await reopened.close();
  });

  it('notifies durable listeners until they unsubscribe', async () => {
    const wal = await WriteAheadLog.open({ dir: tempDir() });
    const seen: number[] = [];
    const unsubscribe = wal.onDurable((durableSeq) => seen.push(durableSeq));
    await wal.append([payload(1), payload(2)]).durable;
    await wal.append([payload(3)]).durable;
    unsubscribe();
    await wal.append([payload(4)]).durable;
    assert.deepEqual(seen, [2, 3]);
    await wal.close();
  });

  it('fails for good when an fsync fails', async () => {
    const dir = tempDir();
    let failFsync = false;
    const wal = await WriteAheadLog.open({
      dir,
      faults: {
        beforeFsync: () => {
          if (failFsync) throw new Error('injected fsync failure');
        },
      },
    });
    await wal.append([payload(1)]).durable;
    failFsync = true;
    const first = wal.append([payload(2)]);
    const second = wal.append([payload(3)]);
    await assert.rejects(first.durable, isWalFailure);
    await assert.rejects(second.durable, isWalFailure);
    assert.equal(wal.durableSeq, 1);
    assert.throws(() => wal.append([payload(4)]), isWalFailure);
    await assert.rejects(wal.sync(), isWalFailure);
    await wal.close();
    const reopened = await WriteAheadLog.open({ dir });
    assert.ok(reopened.lastSeq >= 1);
    assert.deepEqual(reopened.readRange(1, 1)[0]!.payload, payload(1));
    await reopened.close();
  });

  it('rejects the appends queued behind a failing write', async () => {
    let writes = 0;
    const wal = await WriteAheadLog.open({
      dir: tempDir(),
      faults: {
        afterWrite: () => {
          writes += 1;
          if (writes === 1) throw new Error('injected write failure');
        },
      },
    });
    const inflight = wal.append([payload(1)]);
    await Promise.resolve();
    const queued = wal.append([payload(2)]);
    await assert.rejects(inflight.durable, isWalFailure);
    await assert.rejects(queued.durable, isWalFailure);
    await wal.close();
  });

  it('drops files left before a gap by an interrupted removal', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    for (let seq = 1; seq <= 60; seq += 10) await appendEach(wal, seq, seq + 9, 40);
    await wal.close();
    const names = logFiles(dir);
    fs.rmSync(path.join(dir, names[1]!));
    const reopened = await WriteAheadLog.open({ dir });
    assert.equal(reopened.firstSeq, 41);
    assert.equal(reopened.lastSeq, 60);
    assert.deepEqual(logFiles(dir), names.slice(2));
    await reopened.close();
  });

  it('deletes a new file whose header never reached the disk, and files after a corrupt one', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 1000 });
    for (let seq = 1; seq <= 60; seq += 10) await appendEach(wal, seq, seq + 9, 40);
    await wal.close();
    const names = logFiles(dir);
    fs.writeFileSync(path.join(dir, walFileName(61)), Buffer.alloc(FILE_HEADER_BYTES + 5));
    const secondFile = path.join(dir, names[1]!);
    const bytes = fs.readFileSync(secondFile);
    bytes[bytes.length - 2]! ^= 0xff;
    fs.writeFileSync(secondFile, bytes);

    const reopened = await WriteAheadLog.open({ dir });
    assert.equal(reopened.lastSeq, 39);
    assert.deepEqual(logFiles(dir), names.slice(0, 2));
    assert.equal(reopened.append([payload(40)]).firstSeq, 40);
    await reopened.close();
  });

  it('refuses files written by a newer format version', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir });
    await wal.close();
    const file = path.join(dir, walFileName(1));
    const header = fs.readFileSync(file);
    header.writeUInt32LE(WAL_FORMAT_VERSION + 1, 4);
    header.writeUInt32LE(CRC32C.buf(header.subarray(0, 16)) >>> 0, 16);
    fs.writeFileSync(file, header);
    await assert.rejects(WriteAheadLog.open({ dir }), { code: 'corrupt_index' });
    assert.ok(fs.existsSync(file));
    header.writeUInt32LE(0xdeadbeef, 16);
    fs.writeFileSync(file, header);
    await assert.rejects(WriteAheadLog.open({ dir }), { code: 'corrupt_index' }, 'even with another header checksum');
    assert.ok(fs.existsSync(file));
  });

  it('appends numbered records with their own seqs and timestamps, refusing a hole', async () => {
    const dir = tempDir();
    const wal = await WriteAheadLog.open({ dir, segmentBytes: 200 });
    const old = Date.now() - 3_600_000;
    const numbered = [1, 2, 3, 4].map((seq) => ({ seq, timestamp: old + seq, payload: payload(seq, 200) }));
    await assert.rejects(async () => wal.appendNumbered(numbered.slice(1)), { code: 'replication_gap' });
    await assert.rejects(async () => wal.appendNumbered([numbered[0]!, numbered[2]!]), { code: 'replication_gap' });
    assert.equal(wal.lastSeq, 0, 'a refused batch queues nothing');
    for (const record of numbered) await wal.appendNumbered([record]);
    assert.equal(wal.durableSeq, 4);
    const read = wal.readRange(1, 10);
    assert.deepEqual(read.map((record) => [record.seq, record.timestamp]), numbered.map((record) => [record.seq, record.timestamp]));
    assert.deepEqual(read.map((record) => record.payload.toString()), numbered.map((record) => record.payload.toString()));
    assert.equal(wal.append([payload(5)]).firstSeq, 5, 'plain appends continue after them');
    await wal.close();

    const reopened = await WriteAheadLog.open({ dir, segmentBytes: 200 });
    assert.deepEqual(reopened.readRange(1, 4).map((record) => record.timestamp), numbered.map((record) => record.timestamp));
    assert.equal(logFiles(dir).length, 5, 'one file per group');
    assert.equal(await reopened.removeUpTo(10, Date.now() - 60_000), 4, 'retention reads the numbered records as an hour old');
    assert.equal(reopened.firstSeq, 5);
    await reopened.close();
  });

  it('appends 100k records of 1 KB in batches of 1000', async () => {
    const wal = await WriteAheadLog.open({ dir: tempDir() });
    const record = Buffer.alloc(1024, 1);
    const batch = Array.from({ length: 1000 }, () => record);
    const started = performance.now();
    const durable = [];
    for (let round = 0; round < 100; round++) durable.push(wal.append(batch).durable);
    await Promise.all(durable);
    const elapsed = performance.now() - started;
    assert.equal(wal.durableSeq, 100_000);
    const { fsyncs } = wal.stats();
    console.log(`# 100k x 1 KB appended in ${elapsed.toFixed(0)} ms with ${fsyncs} fsync(s)`);
    await wal.close();
  });
});
