/**
 * The table of every node setting: its type, default, whether it can change at runtime, and
 * what it does. Start-up configuration (file, environment, flags) and runtime node settings
 * (`PUT /_node/_local/settings`) both validate against this one table.
 */
import { availableParallelism, hostname } from 'node:os';
import { DEFAULT_ENGINE_SETTINGS } from '../engine/shard/settings.ts';
import type { SettingBounds, SettingType, SettingTypeValue, SettingValue } from './setting-types.ts';

/** Description of one setting key. */
export interface SettingDefinition<T extends SettingType = SettingType> extends SettingBounds {
  type: T;
  /** Value when no source sets the key; a function when it depends on the host. */
  default: SettingTypeValue[T] | (() => SettingTypeValue[T]);
  /** True when the key may be changed at runtime without a restart. */
  dynamic: boolean;
  /** One sentence for `--help`, docs and error messages. */
  description: string;
}

/** A setting family whose keys contain a name segment, e.g. `search.lanes.<lane>.max_queue`. */
export interface SettingPattern<T extends SettingType = SettingType> extends SettingBounds {
  /** Dotted key with one `<name>` placeholder standing for a single segment. */
  pattern: string;
  type: T;
  /** Value of a key of the family that no source sets (for a lane: when it exists at all). */
  default: SettingTypeValue[T] | (() => SettingTypeValue[T]);
  dynamic: boolean;
  description: string;
}

const MB = 1024 * 1024;

/** Every fixed setting key of a node. */
export const SETTINGS = {
  'node.name': {
    type: 'string',
    default: () => hostname(),
    dynamic: false,
    description: 'Human-readable node name shown in logs and APIs (default: the host name).',
  },
  'node.shard_workers': {
    type: 'integer',
    default: () => availableParallelism(),
    min: 0,
    max: 256,
    dynamic: false,
    description: 'Worker threads that run this node\'s shard copies (default: the number of cores; 0 runs shards in the HTTP thread).',
  },
  'http.host': {
    type: 'string',
    default: '127.0.0.1',
    dynamic: false,
    description: 'Address the HTTP server binds to.',
  },
  'http.port': {
    type: 'integer',
    default: 9200,
    min: 0,
    max: 65535,
    dynamic: false,
    description: 'TCP port of the HTTP server (0 picks a free port).',
  },
  'http.max_content_length': {
    type: 'bytes',
    default: 100 * MB,
    min: 1,
    dynamic: false,
    description: 'Largest accepted request body, e.g. 100mb; larger bodies get 413.',
  },
  'http.max_connections': {
    type: 'integer',
    default: 10_000,
    min: 1,
    max: 1_000_000,
    dynamic: false,
    description: 'Most HTTP connections open at once; further connections are closed as soon as they are accepted.',
  },
  'path.data': {
    type: 'string',
    default: './data',
    dynamic: false,
    description: 'Directory holding the catalog, shards, trash and node identity.',
  },
  'cluster.name': {
    type: 'string',
    default: 'trove',
    dynamic: false,
    description: 'Name of the cluster this node belongs to.',
  },
  'cluster.etcd': {
    type: 'list',
    default: [],
    dynamic: false,
    description: 'etcd endpoints (comma-separated); empty runs the embedded single-node catalog.',
  },
  'cluster.node_ttl_ms': {
    type: 'integer',
    default: 10_000,
    min: 2000,
    max: 600_000,
    dynamic: false,
    description: 'Lease time-to-live of this node in the cluster registry: a node that stops heartbeating leaves after this long.',
  },
  'cluster.max_shards_per_node': {
    type: 'integer',
    default: 1000,
    min: 1,
    max: 100_000,
    dynamic: false,
    description: 'Most shard copies (primaries and replicas) one node may host; a collection create or restore that would pass it is refused with a 400.',
  },
  'log.level': {
    type: 'log_level',
    default: 'info',
    dynamic: true,
    description: 'Log level directives: a default level and target=level pairs, e.g. info,engine=debug.',
  },
  'log.format': {
    type: 'string',
    default: 'auto',
    dynamic: false,
    description: 'Log line format: auto (pretty on a terminal, JSON otherwise), json, or pretty (one coloured line per event).',
  },
  'security.enabled': {
    type: 'boolean',
    default: true,
    dynamic: false,
    description: 'Require an API key on every request; false is meant for local experiments only.',
  },
  'node.search.slow_threshold_ms': {
    type: 'integer',
    default: 1000,
    min: -1,
    dynamic: true,
    description: 'Searches taking at least this many milliseconds are logged under the slowlog target and counted as slow (0 logs every search, -1 disables).',
  },
  'action.auto_create_index': {
    type: 'string',
    default: 'true',
    dynamic: true,
    description: 'Whether a write to a missing collection creates it (OpenSearch): true, false, or a comma list of +/- name patterns, the first match deciding.',
  },
  'indexing.max_document_bytes': {
    type: 'bytes',
    default: 10 * MB,
    min: 1024,
    dynamic: true,
    description: 'Largest document an index, create or update accepts (each bulk line too), e.g. 10mb; larger ones get 400 before they are parsed.',
  },
  'search.default_timeout_ms': {
    type: 'integer',
    default: 0,
    min: 0,
    dynamic: true,
    description: 'Timeout applied to searches that do not set one, in milliseconds (0 means none).',
  },
  'search.max_open_scroll_context': {
    type: 'integer',
    default: 500,
    min: 0,
    dynamic: true,
    description: 'Most scroll reader contexts (one per shard copy a scroll reads) open on this node at once (Elasticsearch); past it, opening a scroll is a 429.',
  },
  'search.max_open_pit_context': {
    type: 'integer',
    default: 300,
    min: 0,
    dynamic: true,
    description: 'Most point-in-time reader contexts (one per shard copy a point in time reads) open on this node at once (OpenSearch); past it, creating a point in time is a 429.',
  },
  'search.max_keep_alive_secs': {
    type: 'integer',
    default: 24 * 3600,
    min: 1,
    dynamic: true,
    description: 'Longest keep-alive a scroll or point in time may ask for, in seconds (Elasticsearch search.max_keep_alive, 24h).',
  },
  'trash.retention_secs': {
    type: 'integer',
    default: 7 * 24 * 3600,
    min: 0,
    dynamic: true,
    description: 'Seconds a deleted namespace or collection stays in the trash before it is purged.',
  },
  'changes.retention_secs': {
    type: 'integer',
    default: DEFAULT_ENGINE_SETTINGS.changesRetentionMs / 1000,
    min: 0,
    dynamic: true,
    description: 'Seconds of write history kept for the change feed.',
  },
  'epoch.interval_ms': {
    type: 'integer',
    default: DEFAULT_ENGINE_SETTINGS.epochIntervalMs,
    min: 10,
    dynamic: true,
    description: 'Milliseconds between epochs that freeze the mutable layer into a segment.',
  },
  'epoch.max_docs': {
    type: 'integer',
    default: DEFAULT_ENGINE_SETTINGS.epochMaxDocs,
    min: 1,
    dynamic: true,
    description: 'An epoch starts early when the mutable layer holds this many documents.',
  },
  'epoch.max_bytes': {
    type: 'bytes',
    default: DEFAULT_ENGINE_SETTINGS.epochMaxBytes,
    min: 1,
    dynamic: true,
    description: 'An epoch starts early when the mutable layer holds this many bytes.',
  },
  'wal.segment_bytes': {
    type: 'bytes',
    default: DEFAULT_ENGINE_SETTINGS.walSegmentBytes,
    min: 4096,
    dynamic: false,
    description: 'Size at which a shard starts a new write-ahead log file.',
  },
  'merge.enabled': {
    type: 'boolean',
    default: DEFAULT_ENGINE_SETTINGS.mergeEnabled,
    dynamic: true,
    description: 'Run background tiered merges (manual compaction works either way).',
  },
  'merge.segments_per_tier': {
    type: 'integer',
    default: DEFAULT_ENGINE_SETTINGS.mergeSegmentsPerTier,
    min: 2,
    dynamic: true,
    description: 'Segments of similar size allowed per tier before a background merge.',
  },
  'merge.max_segment_bytes': {
    type: 'bytes',
    default: DEFAULT_ENGINE_SETTINGS.mergeMaxSegmentBytes,
    min: MB,
    dynamic: true,
    description: 'Background merges do not produce segments larger than this.',
  },
} as const satisfies Record<string, SettingDefinition>;

/** Setting families with a name segment; a key of a family that no source sets takes the family default. */
export const SETTING_PATTERNS: readonly SettingPattern[] = [
  {
    pattern: 'search.lanes.<lane>.max_concurrent',
    type: 'integer',
    default: () => Math.floor((availableParallelism() * 3) / 2) + 1,
    min: 1,
    dynamic: true,
    description: 'Searches of this lane that run at the same time.',
  },
  {
    pattern: 'search.lanes.<lane>.max_queue',
    type: 'integer',
    default: 1000,
    min: 0,
    dynamic: true,
    description: 'Searches of this lane that may wait; a full queue answers 429.',
  },
];

/** A fixed setting key. */
export type SettingKey = keyof typeof SETTINGS;

/** The typed values of every fixed setting key. */
export type FixedSettingValues = {
  -readonly [K in SettingKey]: SettingTypeValue[(typeof SETTINGS)[K]['type']];
};

/** What a key resolves to: its type, bounds and whether it is dynamic. */
export interface ResolvedSetting extends SettingBounds {
  key: string;
  type: SettingType;
  dynamic: boolean;
  description: string;
  /** Present for fixed keys only. */
  definition?: SettingDefinition;
  /** The family, for keys of a setting pattern. */
  family?: SettingPattern;
}

function matchesPattern(pattern: string, key: string): boolean {
  const patternParts = pattern.split('.');
  const keyParts = key.split('.');
  if (patternParts.length !== keyParts.length) return false;
  return patternParts.every((part, index) =>
    part.startsWith('<') ? /^[a-z0-9_-]+$/.test(keyParts[index]) : part === keyParts[index],
  );
}

/** Looks a key up in the table (fixed keys first, then patterns); null when unknown. */
export function findSetting(key: string): ResolvedSetting | null {
  if (Object.hasOwn(SETTINGS, key)) {
    const definition: SettingDefinition = SETTINGS[key as SettingKey];
    const { type, dynamic, description, min, max } = definition;
    return { key, type, dynamic, description, min, max, definition };
  }
  for (const family of SETTING_PATTERNS) {
    if (matchesPattern(family.pattern, key)) {
      const { type, dynamic, description, min, max } = family;
      return { key, type, dynamic, description, min, max, family };
    }
  }
  return null;
}

/** The default value of a fixed key (host-dependent defaults are computed now). */
export function defaultValue<K extends SettingKey>(key: K): FixedSettingValues[K] {
  const value: unknown = SETTINGS[key].default;
  return (typeof value === 'function' ? value() : value) as FixedSettingValues[K];
}

/** The default value of any key, fixed or of a family (host-dependent defaults are computed now); undefined when unknown. */
export function settingDefault(key: string): SettingValue | undefined {
  const setting = findSetting(key);
  const value: unknown = setting?.definition?.default ?? setting?.family?.default;
  return (typeof value === 'function' ? value() : value) as SettingValue | undefined;
}

/** Environment variable that overrides a key: `http.port` → `TROVE_HTTP_PORT`. */
export function envNameFor(key: string): string {
  return `TROVE_${key.replace(/[.-]/g, '_').toUpperCase()}`;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = previous[column - 1] + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column] + 1, current[column - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length];
}

/** The known key closest to an unknown one, for "did you mean" hints; null when none is close. */
export function closestSettingKey(key: string): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(3, Math.floor(key.length / 4)) + 1;
  for (const candidate of Object.keys(SETTINGS)) {
    const distance = editDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
