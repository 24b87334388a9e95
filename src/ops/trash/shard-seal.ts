/**
 * Sealing a shard before it enters the trash: epochs until every WAL record is contained in
 * segments (so the files alone say how many documents the shard holds), then close. The WAL files
 * stay (the change feed's history); only the mutable layer is emptied into a segment.
 */
import type { Logger } from 'pino';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import { Shard, type EngineSettings, type ShardStats } from '../../engine/shard/shard.ts';

/** Epochs tried on a shard that still receives stray writes before it is closed and reopened. */
const SEAL_ATTEMPTS = 3;

/** Figures of a sealed shard. */
export interface SealedShard {
  documents: number;
  deletedDocuments: number;
  seqNo: number;
}

function isSealed(stats: ShardStats): boolean {
  return stats.checkpointSeq >= stats.seqNo && stats.mutableDocs === 0;
}

function figures(stats: ShardStats): SealedShard {
  return { documents: stats.docs, deletedDocuments: stats.deletedDocs, seqNo: stats.seqNo };
}

/**
 * Seals and closes an open shard. Statistics are read in the same synchronous turn as `close()`
 * starts, and `close()` refuses writes from that moment, so the figures are the final ones.
 */
export async function sealOpenShard(shard: Shard, reopen: () => Promise<Shard>): Promise<SealedShard> {
  for (let attempt = 0; attempt < SEAL_ATTEMPTS; attempt++) {
    await shard.epoch();
    const stats = shard.stats();
    if (isSealed(stats)) {
      await shard.close();
      return figures(stats);
    }
  }
  // Writes kept arriving: close, then seal a fresh instance nobody else can write to.
  await shard.close();
  return sealOpenShard(await reopen(), () => Promise.reject(new Error('shard kept changing while it was sealed')));
}

/** Options of `sealClosedShard`. */
export interface SealClosedShardOptions {
  dir: string;
  uuid: string;
  mapping: Mapping;
  settings: EngineSettings;
  logger: Logger;
}

/** Opens a closed shard (recovering its WAL), seals it and closes it again. */
export async function sealClosedShard(options: SealClosedShardOptions): Promise<SealedShard> {
  const open = () =>
    Shard.open({
      dir: options.dir,
      uuid: options.uuid,
      mapping: options.mapping,
      settings: { ...options.settings, mergeEnabled: false },
      logger: options.logger,
    });
  return sealOpenShard(await open(), open);
}
