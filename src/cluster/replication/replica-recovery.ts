/**
 * Recovery of a replica copy from its primary (Elasticsearch's peer recovery, simplified):
 *
 * 1. Operation-based when the replica's history is a prefix of the primary's: the primary still
 *    retains the replica's last seq and holds it under the same primary term (two copies with the
 *    same record at a seq share everything before it, since a copy only ever takes records in
 *    order from the primary of their term, after recovering from it). The replica then pulls every
 *    later record.
 * 2. File-based otherwise (an empty copy of a trimmed history, or a copy holding writes the
 *    primary never had, which a failover can leave): the primary holds its files unchanged, the
 *    replica copies them in place of its own and reopens, then pulls the records past them.
 * 3. The primary then tracks the replica from the seq it reached, ships it every later record, and
 *    asks it into the in-sync set once caught up; recovery ends when it is in.
 */
import { rename, rm, mkdir, open as openFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { syncDirectory } from '../../engine/shard/manifest.ts';
import type { FileCopyHold, HistoryPosition, ShardHandle } from '../shard-handle.ts';
import type { ShardAddress } from './in-sync-rules.ts';
import type { ReplicaCopy } from './replica-copy.ts';
import type { ReplicaPeers } from './replication-wire.ts';

/** Records and bytes one pull asks for. */
const PULL_RECORDS = 2_000;
const PULL_BYTES = 8 * 1024 * 1024;
/** How long the primary may take to catch the replica up and commit it in sync. */
export const JOIN_TIMEOUT_MS = 60_000;

/** What a recovery needs of its node. */
export interface RecoveryContext {
  address: ShardAddress;
  uuid: string;
  nodeId: string;
  /** Directory of the local copy. */
  dir: string;
  /** The primary's node and term as this node's catalog says now (null while unassigned). */
  primary(): { nodeId: string; term: number } | null;
  /** The primary copy's handle on its node, or null when that node is not registered. */
  primaryHandle(nodeId: string): ShardHandle | null;
  /** The local copy as it is now. */
  replica(): ReplicaCopy;
  /** Closes the local copy, runs `replace` on its (closed) directory, and opens it again. */
  reopen(replace: () => Promise<void>): Promise<ReplicaCopy>;
  /** Copies the first `bytes` bytes of a held file of the primary copy to `destination`. */
  fetchFile(nodeId: string, hold: number, path: string, bytes: number, destination: string): Promise<void>;
  peers: ReplicaPeers;
  logger: Logger;
  /** True once the copy is closed or no longer a replica here: recovery stops. */
  abandoned(): boolean;
}

/** What one recovery did. */
export interface RecoveryReport {
  /** `operations`: records pulled only; `files`: the primary's files copied first. */
  method: 'operations' | 'files';
  /** The node of the primary it recovered from. */
  source: string;
  /** Epoch millis. */
  startedAt: number;
  tookMs: number;
  /** Files copied and their bytes (none for `operations`). */
  files: number;
  fileBytes: number;
  /** Records pulled after the files, and their payload bytes. */
  records: number;
  recordBytes: number;
  /** The seq the replica reached before the primary tracked it. */
  seq: number;
}

/** Runs one recovery (see the module comment); rejects when any step fails (the caller retries). */
export async function recoverReplica(context: RecoveryContext): Promise<RecoveryReport> {
  const started = Date.now();
  const primary = context.primary();
  if (primary === null || primary.nodeId === context.nodeId) throw new Error('the shard has no primary on another node');
  const source = context.primaryHandle(primary.nodeId);
  if (source === null) throw new Error(`the primary's node [${primary.nodeId}] is not registered`);
  let position = await context.replica().position(primary.term);
  const report: RecoveryReport = { method: 'operations', source: primary.nodeId, startedAt: started, tookMs: 0, files: 0, fileBytes: 0, records: 0, recordBytes: 0, seq: 0 };
  if (!(await sharesHistory(position, source))) {
    report.method = 'files';
    const hold = await source.holdFiles();
    try {
      report.fileBytes = await copyFiles(context, primary.nodeId, hold);
      report.files = hold.files.length;
    } finally {
      await source.releaseFiles(hold.hold).catch(() => undefined);
    }
    position = await context.replica().position(primary.term);
  }
  for (let pull = 0; pull < 1_000_000; pull++) {
    if (context.abandoned()) throw new Error('the copy was closed during recovery');
    const records = await source.readRecords(position.lastSeq, PULL_RECORDS, PULL_BYTES);
    if (records.length === 0) break;
    if (records[0].seq !== position.lastSeq + 1) throw new Error(`the primary no longer retains seq ${position.lastSeq + 1}`);
    position = await context.replica().applyFromPrimary(primary.term, records);
    report.records += records.length;
    for (const record of records) report.recordBytes += record.payload.byteLength;
  }
  report.seq = position.lastSeq;
  await context.peers.call(primary.nodeId, 'primary.track', [context.uuid, context.nodeId, position.lastSeq, primary.term], JOIN_TIMEOUT_MS);
  report.tookMs = Date.now() - started;
  return report;
}

/** Whether the replica's history is a prefix of the primary's (module comment, step 1). */
async function sharesHistory(position: HistoryPosition, source: ShardHandle): Promise<boolean> {
  const theirs = await source.historyPosition();
  if (position.lastSeq === 0) return theirs.firstSeq <= 1;
  if (position.lastTerm === null || position.lastSeq < theirs.firstSeq || position.lastSeq > theirs.lastSeq) return false;
  return (await source.termAt(position.lastSeq)) === position.lastTerm;
}

/** Replaces the local copy's files with the held files of the primary; returns the bytes copied. */
async function copyFiles(context: RecoveryContext, primaryNodeId: string, hold: FileCopyHold): Promise<number> {
  const incoming = `${context.dir}.incoming`;
  let bytes = 0;
  await context.reopen(async () => {
    await rm(incoming, { recursive: true, force: true });
    const directories = new Set<string>();
    for (const file of hold.files) {
      const destination = join(incoming, file.path);
      await mkdir(dirname(destination), { recursive: true });
      directories.add(dirname(destination));
      await context.fetchFile(primaryNodeId, hold.hold, file.path, file.bytes, destination);
      const handle = await openFile(destination, 'r+');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      bytes += file.bytes;
    }
    for (const directory of directories) await syncDirectory(directory);
    await syncDirectory(incoming);
    await rm(context.dir, { recursive: true, force: true });
    await rename(incoming, context.dir);
    await syncDirectory(dirname(context.dir));
  });
  return bytes;
}
