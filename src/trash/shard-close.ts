/**
 * Closing a shard before its directory moves into the trash, and reading its final figures. The
 * shard is not changed first (no epoch): its segments, generation files and WAL move exactly as
 * they are, so a restore replays the same WAL tail into the same in-memory state, and searches
 * score exactly as before the delete.
 */
import type { Logger } from 'pino';
import type { Mapping } from '../engine/mapping/mapping.ts';
import { Shard, type EngineSettings } from '../engine/shard/shard.ts';

/** Figures of a shard when it was closed for the trash. */
export interface ClosedShardFigures {
  documents: number;
  deletedDocuments: number;
  /** Highest WAL seq (the shard's change-feed position). */
  seqNo: number;
}

/**
 * Closes an open shard. Its statistics are read in the same synchronous turn in which `close()`
 * starts refusing writes, so they are the final ones; `close()` then makes every applied write durable.
 */
export async function closeForTrash(shard: Shard): Promise<ClosedShardFigures> {
  const stats = shard.stats();
  await shard.close();
  return { documents: stats.docs, deletedDocuments: stats.deletedDocs, seqNo: stats.seqNo };
}

/** Options of `reopenAndClose`. */
export interface ReopenOptions {
  dir: string;
  uuid: string;
  mapping: Mapping;
  settings: EngineSettings;
  logger: Logger;
}

/**
 * Opens a shard that was not closed cleanly (a crash), which recovers its WAL (a torn tail is cut
 * at the last intact record), and closes it again.
 */
export async function reopenAndClose(options: ReopenOptions): Promise<ClosedShardFigures> {
  const shard = await Shard.open({
    dir: options.dir,
    uuid: options.uuid,
    mapping: options.mapping,
    settings: { ...options.settings, mergeEnabled: false, epochIntervalMs: 24 * 3600 * 1000 },
    logger: options.logger,
  });
  return closeForTrash(shard);
}
