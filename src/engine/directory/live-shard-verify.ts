/**
 * Read-only verification of a live shard copy: the snapshot that `verifyShardFiles` checks is
 * built from the open shard instead of a trash manifest. The caller (`Shard.verify`) runs it
 * while no epoch, merge or WAL trim can replace the manifest or remove files, and hands in the
 * WAL files as far as they were durable when it started: later writes only append past those
 * bytes, so verification never reads a frame that is still being written.
 */
import type { DurableWalFile } from '../wal/wal.ts';
import { inventorySegments, type ShardFileEntry } from './shard-files.ts';
import { verifyShardFiles, type FileFinding, type ShardCheckStatus, type ShardSnapshot } from './shard-verify.ts';

/** What verifying a live shard copy found: the shard's figures and a finding per file. */
export interface LiveShardCheck {
  uuid: string;
  status: ShardCheckStatus;
  /** Highest seq verified: the last durable one when verification started. */
  seqNo: number;
  /** The manifest's checkpoint (records up to it are in segments); 0 before the first epoch. */
  checkpointSeq: number;
  /** Live documents when verification started; null when writes were still in flight (not compared then). */
  expectedDocuments: number | null;
  /** Live documents counted from the files (segments, then the WAL past the checkpoint); null when unreadable. */
  foundDocuments: number | null;
  filesChecked: number;
  bytesChecked: number;
  /** Every problem found, file problems prefixed with the file's path. */
  problems: string[];
  files: FileFinding[];
}

/** What `verifyLiveShard` needs of the open shard, read in one turn when verification starts. */
export interface LiveShardState {
  dir: string;
  uuid: string;
  /** The WAL files as far as they are durable, oldest first; the last one is the active file. */
  walFiles: readonly DurableWalFile[];
  /** Live documents now, when every applied write is in `walFiles`; else null. */
  documents: number | null;
}

/** Verifies the files of a live shard (see the module comment). */
export async function verifyLiveShard(state: LiveShardState): Promise<LiveShardCheck> {
  const { files, manifest } = await inventorySegments(state.dir);
  const walEntries = state.walFiles.map(
    (file, index): ShardFileEntry => ({ path: `wal/${file.name}`, bytes: file.bytes, ...(index === state.walFiles.length - 1 ? { appendOnly: true } : {}) }),
  );
  const seqNo = state.walFiles.at(-1)?.lastSeq ?? 0;
  const snapshot: ShardSnapshot = {
    collection: '',
    shard: 0,
    uuid: state.uuid,
    documents: state.documents,
    seqNo,
    segments: manifest?.segments.length ?? 0,
    files: [...files, ...walEntries],
  };
  const check = await verifyShardFiles(state.dir, snapshot, { recordedWhen: 'when verification started' });
  return {
    uuid: state.uuid,
    status: check.status,
    seqNo,
    checkpointSeq: manifest?.checkpointSeq ?? 0,
    expectedDocuments: check.expectedDocuments,
    foundDocuments: check.foundDocuments,
    filesChecked: check.filesChecked,
    bytesChecked: check.bytesChecked,
    problems: check.problems,
    files: check.files,
  };
}
