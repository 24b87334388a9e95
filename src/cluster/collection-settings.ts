/**
 * The `settings` of `PUT /{collection}`. Understood: `number_of_shards` (1 to 1024) and
 * `number_of_replicas` (0 to 32), given nested (`{"index": {"number_of_shards": 2}}`), prefixed
 * (`"index.number_of_shards"`) or bare, as a JSON integer or a string of digits; and
 * `visibility` (dynamic: `immediate`, the default, makes writes visible to search at once;
 * `refresh` makes them visible on refresh, every `refresh_interval`, see src/cluster/visibility.ts);
 * the index limits `max_result_window` (from + size of a search, and the page of
 * a scroll), `max_docvalue_fields_search` (entries of `docvalue_fields`) and `max_script_fields`
 * (entries of `script_fields`, which Trove refuses past that check: it runs no scripts),
 * `max_slices_per_scroll` and `analyze.max_token_count` (tokens one `_analyze` call may produce), all dynamic; and
 * `number_of_routing_shards` (static, a multiple of `number_of_shards`, kept and shown: shards
 * are never split, so it does not change routing). Kept and shown (TEXT_SETTINGS), with no effect
 * but `refresh_interval` with `visibility: refresh`: `refresh_interval`, `translog.retention.age` / `.size` and
 * `search.concurrent_segment_search.mode` (dynamic), and `soft_deletes.enabled` (static, only
 * `true`). Dynamic and applied by the document service (src/node/dual-write.ts):
 * `dual_write.index_name` and `dual_write.soft_deletes_enabled` (OpenSearch's write mirroring). Static and applied through
 * the mapping: `mapping.ignore_malformed` (the default `ignore_malformed` of the fields that take one).
 * Anything else, and any count out of range, fractional, or not a number, is an
 * illegal_argument error naming the setting: a count is never trusted to size an allocation.
 */
import { EngineError } from '../engine/errors.ts';
import { isPlainObject, previewJson } from '../engine/mapping/json-value.ts';
import { invalidNameReason } from './names.ts';
import { VISIBILITIES } from './visibility.ts';

/** The shard and replica counts of a new collection, and the index limits it sets. */
export interface CollectionCounts {
  numberOfShards: number;
  numberOfReplicas: number;
  /** Only when given (the defaults are not stored). */
  limits?: IndexLimits;
}

/** The optional index settings kept in the catalog under their ES names. */
export interface IndexLimits {
  number_of_routing_shards?: number;
  max_result_window?: number;
  max_docvalue_fields_search?: number;
  max_script_fields?: number;
  max_slices_per_scroll?: number;
  'analyze.max_token_count'?: number;
  'highlight.max_analyzed_offset'?: number;
  refresh_interval?: string;
  'soft_deletes.enabled'?: string;
  'translog.retention.age'?: string;
  'translog.retention.size'?: string;
  'search.concurrent_segment_search.mode'?: string;
  'dual_write.index_name'?: string;
  'dual_write.soft_deletes_enabled'?: string;
  'mapping.ignore_malformed'?: string;
  visibility?: string;
}

/** The dynamic index limits (`PUT _settings` may change them). */
export const DYNAMIC_LIMITS = ['max_result_window', 'max_docvalue_fields_search', 'max_script_fields', 'max_slices_per_scroll', 'analyze.max_token_count', 'highlight.max_analyzed_offset'] as const;

/** The index settings kept as strings (their ES rendering); most have no effect in Trove (see the module comment). */
export type TextSetting =
  | 'refresh_interval'
  | 'soft_deletes.enabled'
  | 'translog.retention.age'
  | 'translog.retention.size'
  | 'search.concurrent_segment_search.mode'
  | 'dual_write.index_name'
  | 'dual_write.soft_deletes_enabled'
  | 'mapping.ignore_malformed'
  | 'visibility';

/** The dynamic text settings (`PUT _settings` may change them; null resets). */
export const DYNAMIC_TEXT_SETTINGS = [
  'refresh_interval',
  'translog.retention.age',
  'translog.retention.size',
  'search.concurrent_segment_search.mode',
  'dual_write.index_name',
  'dual_write.soft_deletes_enabled',
  'visibility',
] as const;

/** A count setting's name (without the `index.` prefix). */
export type CountSetting = 'number_of_shards' | 'number_of_replicas' | Exclude<keyof IndexLimits, TextSetting>;

/** Largest value of the index limits (Java's Integer.MAX_VALUE, as Elasticsearch). */
const INT_MAX = 2_147_483_647;

/** Inclusive bounds and default of each count setting. */
export const COUNT_SETTINGS: Readonly<Record<CountSetting, { min: number; max: number; default: number }>> = {
  number_of_shards: { min: 1, max: 1024, default: 1 },
  number_of_replicas: { min: 0, max: 32, default: 0 },
  number_of_routing_shards: { min: 1, max: 1_048_576, default: 1 },
  max_result_window: { min: 1, max: INT_MAX, default: 10_000 },
  max_docvalue_fields_search: { min: 0, max: INT_MAX, default: 100 },
  max_script_fields: { min: 0, max: INT_MAX, default: 32 },
  max_slices_per_scroll: { min: 1, max: INT_MAX, default: 1024 },
  'analyze.max_token_count': { min: 1, max: INT_MAX, default: 10_000 },
  'highlight.max_analyzed_offset': { min: 1, max: INT_MAX, default: 1_000_000 },
};

/** Names of the index limits (the count settings a collection keeps when given). */
export const LIMIT_SETTINGS: readonly Exclude<keyof IndexLimits, TextSetting>[] = ['number_of_routing_shards', ...DYNAMIC_LIMITS];

const DIGITS = /^\d+$/;
const TIME_VALUE = /^(?:-1|0|\d+(?:d|h|m|s|ms|micros|nanos))$/;
const BYTE_SIZE = /^(?:-1|0|\d+(?:\.\d+)?(?:b|k|kb|m|mb|g|gb|t|tb|p|pb))$/i;
const CONCURRENT_SEARCH_MODES = ['all', 'none', 'auto'];

/** The text settings: their default (shown by `include_defaults`) and how a given value is checked and rendered. */
export const TEXT_SETTINGS: Readonly<Record<TextSetting, { default: string; parse: (rendered: string, name: string) => string }>> = {
  refresh_interval: { default: '1s', parse: timeValue },
  'soft_deletes.enabled': { default: 'true', parse: softDeletes },
  'translog.retention.age': { default: '12h', parse: timeValue },
  'translog.retention.size': { default: '512mb', parse: byteSize },
  'search.concurrent_segment_search.mode': { default: 'auto', parse: concurrentSearchMode },
  'dual_write.index_name': { default: '', parse: dualWriteTarget },
  'dual_write.soft_deletes_enabled': { default: 'true', parse: booleanSetting },
  'mapping.ignore_malformed': { default: 'false', parse: booleanSetting },
  visibility: { default: 'immediate', parse: visibilityMode },
};

function timeValue(rendered: string, name: string): string {
  if (TIME_VALUE.test(rendered)) return rendered;
  throw new EngineError('illegal_argument', `failed to parse setting [index.${name}] with value [${rendered}] as a time value: unit is missing or unrecognized`);
}

function byteSize(rendered: string, name: string): string {
  if (BYTE_SIZE.test(rendered)) return rendered;
  throw new EngineError('illegal_argument', `failed to parse setting [index.${name}] with value [${rendered}] as a size in bytes: unit is missing or unrecognized`);
}

function concurrentSearchMode(rendered: string): string {
  if (CONCURRENT_SEARCH_MODES.includes(rendered)) return rendered;
  throw new EngineError('illegal_argument', `Setting value must be one of [${CONCURRENT_SEARCH_MODES.join(', ')}]`);
}

/** A dual-write target: a collection name as `PUT /{collection}` takes it, or empty (none). */
function dualWriteTarget(rendered: string, name: string): string {
  const reason = rendered === '' ? null : invalidNameReason(rendered);
  if (reason === null) return rendered;
  throw new EngineError('illegal_argument', `Failed to parse value [${rendered}] for setting [index.${name}]: index name ${reason}`);
}

function booleanSetting(rendered: string, name: string): string {
  if (rendered === 'true' || rendered === 'false') return rendered;
  throw new EngineError('illegal_argument', `Failed to parse value [${rendered}] for setting [index.${name}]: only [true] or [false] are allowed.`);
}

function visibilityMode(rendered: string, name: string): string {
  if ((VISIBILITIES as readonly string[]).includes(rendered)) return rendered;
  throw new EngineError('illegal_argument', `Failed to parse value [${rendered}] for setting [index.${name}]: must be one of [${VISIBILITIES.join(', ')}]`);
}

function softDeletes(rendered: string): string {
  if (rendered === 'true') return rendered;
  if (rendered === 'false') {
    throw new EngineError(
      'illegal_argument',
      'Creating indices with soft-deletes disabled is no longer supported. Please do not specify a value for setting [index.soft_deletes.enabled].',
    );
  }
  throw new EngineError('illegal_argument', `Failed to parse value [${rendered}] as only [true] or [false] are allowed.`);
}

/** A text setting's value as ES renders it (a JSON string, number or boolean), checked; throws illegal_argument naming the setting otherwise. */
export function parseTextSetting(name: TextSetting, value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw new EngineError('illegal_argument', `Failed to parse value [${previewJson(value)}] for setting [index.${name}]`);
  }
  return TEXT_SETTINGS[name].parse(String(value), name);
}

function isTextSetting(name: string): name is TextSetting {
  return Object.hasOwn(TEXT_SETTINGS, name);
}

function isDynamicText(name: string): name is (typeof DYNAMIC_TEXT_SETTINGS)[number] {
  return (DYNAMIC_TEXT_SETTINGS as readonly string[]).includes(name);
}

function unknownSetting(name: string): EngineError {
  return new EngineError(
    'illegal_argument',
    `unknown setting [index.${name}] please check that any required plugins are installed, or check the breaking changes documentation for removed settings`,
  );
}

/** Parses and bounds the `settings` object of a create request (undefined: the defaults). */
export function parseCollectionSettings(settings: unknown): CollectionCounts {
  const values = new Map<string, unknown>();
  if (settings !== undefined) {
    if (!isPlainObject(settings)) throw new EngineError('parsing', '[settings] must be an object');
    flattenSettings(settings, '', values);
  }
  for (const name of values.keys()) {
    if (!isCountSetting(name) && !isTextSetting(name)) throw unknownSetting(name);
  }
  const counts: CollectionCounts = {
    numberOfShards: countOrDefault(values, 'number_of_shards'),
    numberOfReplicas: countOrDefault(values, 'number_of_replicas'),
  };
  const limits: IndexLimits = {};
  for (const name of LIMIT_SETTINGS) if (values.has(name)) limits[name] = parseCountSetting(name, values.get(name));
  for (const [name, value] of values) if (isTextSetting(name) && value !== null) limits[name] = parseTextSetting(name, value);
  const routing = limits.number_of_routing_shards;
  if (routing !== undefined && routing % counts.numberOfShards !== 0) {
    throw new EngineError(
      'illegal_argument',
      `the number of source shards [${counts.numberOfShards}] must be a factor of [${routing}] (setting [index.number_of_routing_shards])`,
    );
  }
  if (Object.keys(limits).length > 0) counts.limits = limits;
  return counts;
}

/** A parsed `PUT /{collection}/_settings` body: the dynamic values, and the static settings it names (refused by the caller). */
export interface SettingsUpdate {
  numberOfReplicas?: number;
  /** Dynamic index limits the body sets; null resets one to its default (`"index.max_result_window": null`). */
  limits: { [K in (typeof DYNAMIC_LIMITS)[number]]?: number | null };
  /** Dynamic text settings the body sets; null resets one (`"index.refresh_interval": null`). */
  text: { [K in (typeof DYNAMIC_TEXT_SETTINGS)[number]]?: string | null };
  /** `index.`-prefixed names of static settings the body sets (`index.number_of_shards`). */
  staticSettings: string[];
}

/** Parses the body of `PUT /{collection}/_settings` (`{index: {...}}`, `{settings: {...}}` or flat); unknown settings are illegal_argument. */
export function parseSettingsUpdate(body: unknown): SettingsUpdate {
  if (!isPlainObject(body)) throw new EngineError('parsing', 'the settings body must be a JSON object');
  const settings = Object.keys(body).length === 1 && isPlainObject(body.settings) ? body.settings : body;
  const values = new Map<string, unknown>();
  flattenSettings(settings, '', values);
  const update: SettingsUpdate = { staticSettings: [], limits: {}, text: {} };
  for (const [name, value] of values) {
    if (name === 'number_of_replicas') update.numberOfReplicas = parseCountSetting(name, value);
    else if (isDynamicLimit(name)) update.limits[name] = value === null ? null : parseCountSetting(name, value);
    else if (isDynamicText(name)) update.text[name] = value === null ? null : parseTextSetting(name, value);
    else if (name === 'number_of_shards' || name === 'number_of_routing_shards' || name === 'soft_deletes.enabled' || name === 'mapping.ignore_malformed') update.staticSettings.push(`index.${name}`);
    else throw unknownSetting(name);
  }
  return update;
}

/** The value of a count setting: an integer (or a string of digits) within its bounds; throws illegal_argument naming it otherwise. */
export function parseCountSetting(name: CountSetting, value: unknown): number {
  const { min, max } = COUNT_SETTINGS[name];
  const number = typeof value === 'string' && DIGITS.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max) {
    throw new EngineError(
      'illegal_argument',
      `Failed to parse value [${previewJson(value)}] for setting [index.${name}]: must be an integer between ${min} and ${max}`,
    );
  }
  return number;
}

function countOrDefault(values: ReadonlyMap<string, unknown>, name: CountSetting): number {
  return values.has(name) ? parseCountSetting(name, values.get(name)) : COUNT_SETTINGS[name].default;
}

function isDynamicLimit(name: string): name is (typeof DYNAMIC_LIMITS)[number] {
  return (DYNAMIC_LIMITS as readonly string[]).includes(name);
}

function isCountSetting(name: string): name is CountSetting {
  return Object.hasOwn(COUNT_SETTINGS, name);
}

/**
 * Flattens nested settings into `index.`-less dotted names. A known count setting takes its value
 * whatever its type, so that `{"number_of_replicas": {}}` is refused instead of vanishing.
 */
function flattenSettings(settings: Record<string, unknown>, prefix: string, out: Map<string, unknown>): void {
  for (const [key, value] of Object.entries(settings)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const name = path.startsWith('index.') ? path.slice('index.'.length) : path;
    if (isPlainObject(value) && !isCountSetting(name) && !isTextSetting(name)) flattenSettings(value, path, out);
    else out.set(name, value);
  }
}
