/**
 * Runtime node settings (`GET|PUT /_node/_local/settings`): the start-up configuration plus
 * transient overrides. Every key is validated against the one settings table
 * (src/config/settings.ts); a change is validated completely before anything is applied, then
 * swapped in as one new immutable value map, so a request sees either all of a change or none of
 * it. `null` removes a key's override (back to the configuration value). A `log_level` value is
 * merged into the current directive list (see src/ops/logging/log-directives.ts). Overrides live
 * in memory only: a restart goes back to the configuration, as "transient" says.
 *
 * Consumers subscribe with `onChange` instead of polling; listeners run synchronously right after
 * the swap, in subscription order.
 */
import type { Logger } from 'pino';
import type { NodeConfig, NodeSettingValues, SettingSource } from '../../config/load-config.ts';
import { parseSettingValue, type SettingValue } from '../../config/setting-types.ts';
import { SETTING_PATTERNS, closestSettingKey, findSetting, settingDefault } from '../../config/settings.ts';
import { mergeDirectives } from '../logging/log-directives.ts';
import { SettingsError } from './settings-error.ts';

/** Where an effective value comes from: the start-up sources, or a runtime override. */
export type EffectiveSource = SettingSource | 'transient';

/** What listeners receive after a change was applied. */
export interface SettingsChange {
  /** Every effective value after the change. */
  values: Readonly<NodeSettingValues>;
  /** Every effective value before the change. */
  previous: Readonly<NodeSettingValues>;
  /** Keys whose effective value changed (keys of a removed lane included). */
  changed: readonly string[];
}

/** A subscriber to settings changes. */
export type SettingsListener = (change: SettingsChange) => void;

/** The `GET /_node/_local/settings` view. */
export interface SettingsView {
  /** Effective value of every key, sorted by key. */
  settings: Record<string, SettingValue>;
  /** Source of every key in `settings`. */
  sources: Record<string, EffectiveSource>;
  /** The runtime overrides only. */
  transient: Record<string, SettingValue>;
}

/** Options of `DynamicSettings`. */
export interface DynamicSettingsOptions {
  config: NodeConfig;
  /** Logs applied changes and failing listeners (the `settings` target). */
  logger: Logger;
  /** Keys of setting families that always exist even when no source sets them (the default lane's budgets). */
  implicitKeys?: readonly string[];
}

interface Subscription {
  listener: SettingsListener;
  keys: readonly string[] | null;
}

/** Prefix of a family pattern up to and including its name segment: `search.lanes.<lane>`. */
function familyPrefix(pattern: string): string {
  return pattern.slice(0, pattern.indexOf('>') + 1);
}

/** The family prefix and name a patterned key belongs to, e.g. `search.lanes.<lane>` and `bulk`. */
function familyMember(key: string): { prefix: string; name: string } | null {
  const family = findSetting(key)?.family;
  if (!family) return null;
  const prefix = familyPrefix(family.pattern);
  return { prefix, name: key.split('.')[prefix.split('.').length - 1] };
}

function sameValue(left: SettingValue | undefined, right: SettingValue | undefined): boolean {
  return Array.isArray(left) || Array.isArray(right) ? JSON.stringify(left) === JSON.stringify(right) : left === right;
}

function matches(keys: readonly string[], key: string): boolean {
  return keys.some((entry) => (entry.endsWith('.') ? key.startsWith(entry) : key === entry));
}

/** See the module comment. */
export class DynamicSettings {
  private overrides = new Map<string, SettingValue>();
  private current: Readonly<NodeSettingValues>;
  private currentSources: Readonly<Record<string, EffectiveSource>>;
  private readonly subscriptions: Subscription[] = [];

  constructor(private readonly options: DynamicSettingsOptions) {
    ({ values: this.current, sources: this.currentSources } = this.compute(this.overrides));
  }

  /** Every effective value (start-up values with overrides; complete families filled with defaults). */
  values(): Readonly<NodeSettingValues> {
    return this.current;
  }

  /** The effective values, their sources and the overrides, for `GET /_node/_local/settings`. */
  view(): SettingsView {
    const transient: Record<string, SettingValue> = {};
    for (const key of [...this.overrides.keys()].sort()) transient[key] = this.overrides.get(key)!;
    const settings: Record<string, SettingValue> = {};
    const sources: Record<string, EffectiveSource> = {};
    for (const key of Object.keys(this.current).sort()) {
      settings[key] = this.current[key];
      sources[key] = this.currentSources[key];
    }
    return { settings, sources, transient };
  }

  /**
   * Subscribes to applied changes. `keys` limits notifications to changes of those keys (an entry
   * ending with a dot is a prefix, e.g. `search.lanes.`). Returns the function that unsubscribes.
   */
  onChange(listener: SettingsListener, keys?: readonly string[]): () => void {
    const subscription: Subscription = { listener, keys: keys ?? null };
    this.subscriptions.push(subscription);
    return () => {
      const index = this.subscriptions.indexOf(subscription);
      if (index >= 0) this.subscriptions.splice(index, 1);
    };
  }

  /**
   * Validates a flat map of key → new value (`null` resets the key) and applies it atomically.
   * Throws SettingsError naming every unknown, static or invalid key; then nothing is applied.
   * Returns the change (`changed` is empty when every value was already in effect).
   */
  update(changes: Readonly<Record<string, unknown>>): SettingsChange {
    const next = new Map(this.overrides);
    const problems: string[] = [];
    const refused: string[] = [];
    for (const [key, raw] of Object.entries(changes)) {
      const problem = this.stage(next, key, raw);
      if (problem !== null) {
        problems.push(problem);
        refused.push(key);
      }
    }
    if (problems.length > 0) throw new SettingsError('invalid_setting', `${problems.join('; ')}; no setting was changed`, refused);

    const previous = this.current;
    const { values, sources } = this.compute(next);
    const changed = [...new Set([...Object.keys(previous), ...Object.keys(values)])]
      .filter((key) => !sameValue(previous[key], values[key]))
      .sort();
    this.overrides = next;
    this.current = values;
    this.currentSources = sources;
    const change: SettingsChange = { values, previous, changed };
    if (changed.length > 0) {
      this.options.logger.info({ changed: Object.fromEntries(changed.map((key) => [key, values[key] ?? null])) }, 'node settings changed');
      this.notify(change);
    }
    return change;
  }

  /** Validates one key of a change into `next`; returns the problem, or null when it is fine. */
  private stage(next: Map<string, SettingValue>, key: string, raw: unknown): string | null {
    const setting = findSetting(key);
    if (setting === null) {
      const hint = closestSettingKey(key);
      return `unknown setting [${key}]${hint ? ` (did you mean [${hint}]?)` : ''}`;
    }
    if (!setting.dynamic) return `setting [${key}] is not dynamic: set it in the configuration file and restart the node`;
    if (raw === null) {
      next.delete(key);
      return null;
    }
    let value: SettingValue;
    try {
      value = parseSettingValue(setting.type, raw, setting);
    } catch (error) {
      return `invalid value for setting [${key}]: ${(error as Error).message}`;
    }
    if (setting.type === 'log_level') {
      const base = next.get(key) ?? this.options.config.values[key];
      value = mergeDirectives(String(base ?? value), value as string);
    }
    next.set(key, value);
    return null;
  }

  private notify(change: SettingsChange): void {
    for (const subscription of [...this.subscriptions]) {
      if (subscription.keys !== null && !change.changed.some((key) => matches(subscription.keys!, key))) continue;
      try {
        subscription.listener(change);
      } catch (error) {
        this.options.logger.error({ err: error, changed: change.changed }, 'a settings listener failed');
      }
    }
  }

  /** Effective values and sources for a set of overrides; family members are completed with defaults. */
  private compute(overrides: ReadonlyMap<string, SettingValue>): {
    values: Readonly<NodeSettingValues>;
    sources: Readonly<Record<string, EffectiveSource>>;
  } {
    const { config, implicitKeys = [] } = this.options;
    const values: Record<string, SettingValue> = { ...config.values };
    const sources: Record<string, EffectiveSource> = { ...config.sources };
    for (const [key, value] of overrides) {
      values[key] = value;
      sources[key] = 'transient';
    }
    const members = new Map<string, Set<string>>();
    for (const key of [...Object.keys(values), ...implicitKeys]) {
      const member = familyMember(key);
      if (member) members.set(member.prefix, (members.get(member.prefix) ?? new Set()).add(member.name));
    }
    for (const family of SETTING_PATTERNS) {
      const prefix = familyPrefix(family.pattern);
      for (const name of members.get(prefix) ?? []) {
        const key = family.pattern.replace(/<[^>]+>/, name);
        if (values[key] === undefined) {
          values[key] = settingDefault(key)!;
          sources[key] = 'default';
        }
      }
    }
    return { values: Object.freeze(values) as Readonly<NodeSettingValues>, sources };
  }
}
