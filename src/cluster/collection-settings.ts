/**
 * The `settings` of `PUT /{collection}`. Understood: `number_of_shards` (1 to 1024) and
 * `number_of_replicas` (0 to 32), given nested (`{"index": {"number_of_shards": 2}}`), prefixed
 * (`"index.number_of_shards"`) or bare, as a JSON integer or a string of digits; and
 * `refresh_interval`, accepted for client compatibility with no effect (writes are visible to
 * search at once); the index limits `max_result_window` (from + size of a search, and the page of
 * a scroll), `max_docvalue_fields_search` (entries of `docvalue_fields`) and `max_script_fields`
 * (entries of `script_fields`, which Trove refuses past that check: it runs no scripts), all dynamic; and
 * `number_of_routing_shards` (static, a multiple of `number_of_shards`, kept and shown: shards
 * are never split, so it does not change routing). Anything else, and any count out of range, fractional, or not a number, is an
 * illegal_argument error naming the setting: a count is never trusted to size an allocation.
 */
import { EngineError } from '../engine/errors.ts';
import { isPlainObject, previewJson } from '../engine/mapping/json-value.ts';

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
}

/** The dynamic index limits (`PUT _settings` may change them). */
export const DYNAMIC_LIMITS = ['max_result_window', 'max_docvalue_fields_search', 'max_script_fields'] as const;

/** A count setting's name (without the `index.` prefix). */
export type CountSetting = 'number_of_shards' | 'number_of_replicas' | keyof IndexLimits;

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
};

/** Names of the index limits. */
const LIMIT_SETTINGS: readonly (keyof IndexLimits)[] = ['number_of_routing_shards', ...DYNAMIC_LIMITS];

/** Accepted for client compatibility with no effect. */
const NO_OP_SETTINGS: ReadonlySet<string> = new Set(['refresh_interval']);

const DIGITS = /^\d+$/;

/** Parses and bounds the `settings` object of a create request (undefined: the defaults). */
export function parseCollectionSettings(settings: unknown): CollectionCounts {
  const values = new Map<string, unknown>();
  if (settings !== undefined) {
    if (!isPlainObject(settings)) throw new EngineError('parsing', '[settings] must be an object');
    flattenSettings(settings, '', values);
  }
  for (const name of values.keys()) {
    if (!isCountSetting(name) && !NO_OP_SETTINGS.has(name)) {
      throw new EngineError(
        'illegal_argument',
        `unknown setting [index.${name}] please check that any required plugins are installed, or check the breaking changes documentation for removed settings`,
      );
    }
  }
  const counts: CollectionCounts = {
    numberOfShards: countOrDefault(values, 'number_of_shards'),
    numberOfReplicas: countOrDefault(values, 'number_of_replicas'),
  };
  const limits: IndexLimits = {};
  for (const name of LIMIT_SETTINGS) if (values.has(name)) limits[name] = parseCountSetting(name, values.get(name));
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
  /** `index.`-prefixed names of static settings the body sets (`index.number_of_shards`). */
  staticSettings: string[];
}

/** Parses the body of `PUT /{collection}/_settings` (`{index: {...}}`, `{settings: {...}}` or flat); unknown settings are illegal_argument. */
export function parseSettingsUpdate(body: unknown): SettingsUpdate {
  if (!isPlainObject(body)) throw new EngineError('parsing', 'the settings body must be a JSON object');
  const settings = Object.keys(body).length === 1 && isPlainObject(body.settings) ? body.settings : body;
  const values = new Map<string, unknown>();
  flattenSettings(settings, '', values);
  const update: SettingsUpdate = { staticSettings: [], limits: {} };
  for (const [name, value] of values) {
    if (name === 'number_of_replicas') update.numberOfReplicas = parseCountSetting(name, value);
    else if (isDynamicLimit(name)) update.limits[name] = value === null ? null : parseCountSetting(name, value);
    else if (name === 'number_of_shards' || name === 'number_of_routing_shards') update.staticSettings.push(`index.${name}`);
    else if (!NO_OP_SETTINGS.has(name)) {
      throw new EngineError(
        'illegal_argument',
        `unknown setting [index.${name}] please check that any required plugins are installed, or check the breaking changes documentation for removed settings`,
      );
    }
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
    if (isPlainObject(value) && !isCountSetting(name)) flattenSettings(value, path, out);
    else out.set(name, value);
  }
}
