import type { Visibility } from './refreshed-view.ts';

/** Tunables of one shard engine; the node maps its dotted settings onto these. */
export interface EngineSettings {
  /** Freeze the mutable layer at least this often when it holds data (ms). */
  epochIntervalMs: number;
  /** Freeze the mutable layer once it holds this many documents. */
  epochMaxDocs: number;
  /** Freeze the mutable layer once it holds about this many bytes. */
  epochMaxBytes: number;
  /** Rotate the WAL to a new file past this size. */
  walSegmentBytes: number;
  /** Keep WAL records at least this long for the change feed (ms), even after an epoch. */
  changesRetentionMs: number;
  /** Tiered merge policy: merge once this many segments of similar size exist. */
  mergeSegmentsPerTier: number;
  /** Segments larger than this are not merged by the background policy. */
  mergeMaxSegmentBytes: number;
  /** Background merges on or off (manual compaction always runs). */
  mergeEnabled: boolean;
  /** The collection's `index.visibility`: writes visible at once (absent: `immediate`), or on refresh (refreshed-view.ts). */
  visibility?: Visibility;
  /** The collection's `index.refresh_interval` in ms, for `visibility: refresh` (absent: 1 s; not positive: no periodic refresh). */
  refreshIntervalMs?: number;
}

/** `index.refresh_interval` when a collection sets none (Elasticsearch's 1 s). */
export const DEFAULT_REFRESH_INTERVAL_MS = 1000;

/** Defaults; see docs/architecture.md for the reasoning. */
export const DEFAULT_ENGINE_SETTINGS: EngineSettings = {
  epochIntervalMs: 30_000,
  epochMaxDocs: 50_000,
  epochMaxBytes: 64 * 1024 * 1024,
  walSegmentBytes: 64 * 1024 * 1024,
  changesRetentionMs: 3_600_000,
  mergeSegmentsPerTier: 10,
  mergeMaxSegmentBytes: 5 * 1024 * 1024 * 1024,
  mergeEnabled: true,
};
