/**
 * Cluster settings (`GET|PUT /_cluster/settings`, Elasticsearch's API): the dynamic node settings
 * (src/config/settings.ts, e.g. `action.auto_create_index`, `search.max_open_scroll_context`,
 * `search.max_keep_alive_secs`, `search.default_timeout_ms`) set once for every node. They live in
 * the shared catalog, so every node sees them and applies them to its runtime settings (the layer
 * `PUT /_node/_local/settings` also sets: the later change wins), transient values over
 * persistent ones. Persistent ones survive restarts; transient ones are cleared when a node starts
 * with no other node of the cluster alive (the cluster restarted). A key that is not a setting is
 * Elasticsearch's 400 `persistent setting [x], not recognized`; a static one, or a bad value,
 * a 400 too, and then nothing changes. `null` resets a key.
 */
import type { Logger } from 'pino';
import type { ClusterSettingsMeta } from '../cluster/catalog.ts';
import type { Coordinator } from '../cluster/coordinator.ts';
import { parseSettingValue, type SettingValue } from '../config/setting-types.ts';
import { SETTINGS, findSetting, settingDefault } from '../config/settings.ts';
import { EngineError } from '../engine/errors.ts';
import type { DynamicSettings } from '../ops/settings/dynamic-settings.ts';

/** The answer of `PUT /_cluster/settings`: the values it set, nested (or flat with `flat_settings`). */
export interface ClusterSettingsUpdate {
  acknowledged: true;
  persistent: Record<string, unknown>;
  transient: Record<string, unknown>;
}

/** The answer of `GET /_cluster/settings`. */
export interface ClusterSettingsView {
  persistent: Record<string, unknown>;
  transient: Record<string, unknown>;
  defaults?: Record<string, unknown>;
}

type Scope = 'persistent' | 'transient';

const EMPTY: ClusterSettingsMeta = { persistent: {}, transient: {} };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `{"search": {"a": 1}}` and `{"search.a": 1}` alike, as flat keys (null kept: a reset). */
function flatten(value: Record<string, unknown>, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, item] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isObject(item)) flatten(item, path, out);
    else out[path] = item;
  }
  return out;
}

/** Flat keys as nested objects, as Elasticsearch shows settings without `flat_settings`. */
function nest(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(flat)) {
    const parts = key.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) {
      if (!isObject(node[part])) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[parts.at(-1)!] = value;
  }
  return out;
}

/** A setting value as Elasticsearch renders it: a string (lists stay lists of strings). */
function rendered(value: unknown): unknown {
  return Array.isArray(value) ? value.map(String) : value === null ? null : String(value);
}

function renderAll(flat: Record<string, unknown>, asFlat: boolean): Record<string, unknown> {
  const out = Object.fromEntries(Object.keys(flat).sort().map((key) => [key, rendered(flat[key])]));
  return asFlat ? out : nest(out);
}

/** See the module comment. */
export class ClusterSettingsService {
  /** The cluster values applied to the runtime settings last, to reset those that go away. */
  private applied: Record<string, unknown> = {};

  constructor(
    private readonly coordinator: Coordinator,
    private readonly settings: DynamicSettings,
    private readonly waitForRevision: (revision: number) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /**
   * Starts applying the catalog's cluster settings on this node; first clears the transient ones
   * when no other node of the cluster is alive (call before this node serves requests).
   */
  async start(nodeId: string): Promise<void> {
    this.coordinator.watch((event) => {
      if (event.changes.some((change) => change.kind === 'cluster_settings_updated')) this.apply(event.catalog.clusterSettings ?? EMPTY);
    });
    const current = this.current();
    const alone = this.coordinator.listNodes().every((node) => node.id === nodeId);
    if (alone && Object.keys(current.transient).length > 0) {
      await this.coordinator.updateClusterSettings({ persistent: current.persistent, transient: {} });
      await this.waitForRevision(this.coordinator.revision);
    }
    this.apply(this.current());
  }

  /** `GET /_cluster/settings`. */
  view(options: { flat: boolean; includeDefaults: boolean }): ClusterSettingsView {
    const { persistent, transient } = this.current();
    const view: ClusterSettingsView = { persistent: renderAll(persistent, options.flat), transient: renderAll(transient, options.flat) };
    if (options.includeDefaults) {
      const defaults: Record<string, unknown> = {};
      for (const [key, definition] of Object.entries(SETTINGS)) {
        if (definition.dynamic && !(key in persistent) && !(key in transient)) defaults[key] = settingDefault(key);
      }
      view.defaults = renderAll(defaults, options.flat);
    }
    return view;
  }

  /** `PUT /_cluster/settings`: validates every key first, then changes the catalog once. */
  async update(body: unknown, options: { flat: boolean }): Promise<ClusterSettingsUpdate> {
    if (!isObject(body)) throw new EngineError('parsing', 'the cluster settings body must be a JSON object');
    for (const key of Object.keys(body)) {
      if (key !== 'persistent' && key !== 'transient') throw new EngineError('parsing', `request body contains unknown field [${key}]: expected [persistent] or [transient]`);
    }
    const current = this.current();
    const next: ClusterSettingsMeta = { persistent: { ...current.persistent }, transient: { ...current.transient } };
    const changed: Record<Scope, Record<string, unknown>> = { persistent: {}, transient: {} };
    for (const scope of ['persistent', 'transient'] as const) {
      const given = body[scope];
      if (given === undefined) continue;
      if (!isObject(given)) throw new EngineError('parsing', `[${scope}] must be an object of settings`);
      for (const [key, raw] of Object.entries(flatten(given))) {
        if (raw === null) {
          delete next[scope][key];
          continue;
        }
        const value = this.parse(scope, key, raw);
        next[scope][key] = value;
        changed[scope][key] = value;
      }
    }
    await this.coordinator.updateClusterSettings(next);
    await this.waitForRevision(this.coordinator.revision);
    this.apply(this.current());
    return { acknowledged: true, persistent: renderAll(changed.persistent, options.flat), transient: renderAll(changed.transient, options.flat) };
  }

  /** Checks one key and value of a scope, in Elasticsearch's words. */
  private parse(scope: Scope, key: string, raw: unknown): SettingValue {
    const setting = findSetting(key);
    if (setting === null) throw new EngineError('illegal_argument', `${scope} setting [${key}], not recognized`);
    if (!setting.dynamic) throw new EngineError('illegal_argument', `${scope} setting [${key}], not dynamically updateable`);
    try {
      return parseSettingValue(setting.type, raw, setting);
    } catch (error) {
      throw new EngineError('illegal_argument', `Failed to parse value [${String(raw)}] for setting [${key}]: ${(error as Error).message}`);
    }
  }

  private current(): ClusterSettingsMeta {
    return this.coordinator.catalog().clusterSettings ?? EMPTY;
  }

  /** Sets the cluster values (transient over persistent) in the runtime settings, and resets those no longer set. */
  private apply(settings: ClusterSettingsMeta): void {
    const effective = { ...settings.persistent, ...settings.transient };
    const changes: Record<string, unknown> = {};
    for (const key of Object.keys(this.applied)) if (!(key in effective)) changes[key] = null;
    for (const [key, value] of Object.entries(effective)) if (JSON.stringify(this.applied[key]) !== JSON.stringify(value)) changes[key] = value;
    if (Object.keys(changes).length === 0) return;
    try {
      this.settings.update(changes);
      this.applied = effective;
    } catch (error) {
      this.logger.error({ err: error, changes }, 'applying the cluster settings failed');
    }
  }
}
