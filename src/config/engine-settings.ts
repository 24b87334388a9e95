/** Maps the node's dotted settings onto the shard engine's tunables. */
import type { EngineSettings } from '../engine/shard/settings.ts';
import type { NodeSettingValues } from './load-config.ts';

/** Engine tunables for the given node setting values. */
export function engineSettingsFromConfig(values: Readonly<NodeSettingValues>): EngineSettings {
  return {
    epochIntervalMs: values['epoch.interval_ms'],
    epochMaxDocs: values['epoch.max_docs'],
    epochMaxBytes: values['epoch.max_bytes'],
    walSegmentBytes: values['wal.segment_bytes'],
    changesRetentionMs: values['changes.retention_secs'] * 1000,
    mergeSegmentsPerTier: values['merge.segments_per_tier'],
    mergeMaxSegmentBytes: values['merge.max_segment_bytes'],
    mergeEnabled: values['merge.enabled'],
  };
}
