/**
 * Closing a shard before its directory moves into the trash, and reading its final figures. The
 * shard is not changed first (no epoch): its segments, generation files and WAL move exactly as
 * they are, so a restore replays the same WAL tail into the same in-memory state, and searches
 * score exactly as before the delete.
 */
import type { Logger } from 'pino';
import { LocalShardHandle } from '../cluster/local-shard-handle.ts';
import type { ClosedShardFigures, ShardHandle } from '../cluster/shard-handle.ts';
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { EngineSettings } from '../engine/shard/shard.ts';

export type { ClosedShardFigures };

/** Closes an open shard copy; its figures are the final ones (see `ShardHandle.close`). */
export function closeForTrash(handle: ShardHandle): Promise<ClosedShardFigures> {
  return handle.close();
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
  const handle = await LocalShardHandle.open(
    {
      dir: options.dir,
      uuid: options.uuid,
      mapping: options.mapping,
      settings: { ...options.settings, mergeEnabled: false, epochIntervalMs: 24 * 3600 * 1000 },
      bindings: {},
    },
    options.logger,
  );
  return handle.close();
}
