/**
 * `GET /{target}/_settings` and `PUT /{target}/_settings`: a collection's settings in
 * Elasticsearch's shape, and changes to the dynamic ones. `number_of_replicas` is dynamic and is
 * applied to the catalog (health and write `_shards` follow it), and so are `max_result_window`
 * and the other index limits (null resets them); `refresh_interval`, `translog.retention.*` and
 * `search.concurrent_segment_search.mode` are kept and shown with no effect (writes are
 * searchable at once). A read may name settings (`index.number_of_s*`), render them flat and add
 * the defaults. `number_of_shards` and `number_of_routing_shards` are static: a body setting it
 * is refused whole with ES's message, and nothing changes.
 */
import { COUNT_SETTINGS, LIMIT_SETTINGS, TEXT_SETTINGS, parseSettingsUpdate, type TextSetting } from '../cluster/collection-settings.ts';
import type { CollectionMeta } from '../cluster/catalog.ts';
import { matchesWildcard } from '../cluster/names.ts';
import { EngineError } from '../engine/errors.ts';
import { asNodeError } from './node-error.ts';
import { flatIndexSettingsOf, nestSettings, resolveCollections, type ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** How `GET _settings` renders: which settings (names or `*` patterns, `_all`), flat or nested, with the defaults or not. */
export interface GetSettingsOptions extends ResolveOptions {
  /** Comma list of `index.`-prefixed names or patterns; absent, `_all` or `*`: every setting. */
  names?: string;
  /** ES `flat_settings`: `{"index.number_of_shards": "1"}` instead of nested objects. */
  flat?: boolean;
  /** ES `include_defaults`: a `defaults` object with the settings left at their default. */
  includeDefaults?: boolean;
}

/** One collection's answer of `GET _settings`. */
export interface SettingsView {
  settings: Record<string, unknown>;
  defaults?: Record<string, unknown>;
}

/** `GET /{target}/_settings[/{names}]`: `{<name>: {settings: {index: {...}}}}` for each selected collection. */
export function getCollectionSettings(context: NodeContext, target: string, options: GetSettingsOptions = {}): Record<string, SettingsView> {
  const patterns = settingPatterns(options.names);
  const selected = (name: string): boolean => patterns === null || patterns.some((pattern) => matchesWildcard(pattern, name));
  const render = (flat: Map<string, string>): Record<string, unknown> => {
    const entries = [...flat].filter(([name]) => selected(name));
    return options.flat === true ? Object.fromEntries(entries) : nestSettings(entries);
  };
  const out: Record<string, SettingsView> = {};
  for (const hosted of resolveCollections(context, target, options)) {
    const view: SettingsView = { settings: render(flatIndexSettingsOf(hosted.meta)) };
    if (options.includeDefaults === true) view.defaults = render(defaultSettingsOf(hosted.meta));
    out[hosted.meta.name] = view;
  }
  return out;
}

/** The name patterns of a `GET _settings/{names}` (null: every setting). */
function settingPatterns(names: string | undefined): string[] | null {
  if (names === undefined) return null;
  const patterns = names
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return patterns.length === 0 || patterns.includes('_all') ? null : patterns;
}

/** The defaults of the settings a collection leaves unset (flat names). */
function defaultSettingsOf(meta: CollectionMeta): Map<string, string> {
  const defaults = new Map<string, string>();
  for (const name of LIMIT_SETTINGS) {
    if (meta.settings[name] !== undefined) continue;
    const value = name === 'number_of_routing_shards' ? meta.settings.number_of_shards : COUNT_SETTINGS[name].default;
    defaults.set(`index.${name}`, String(value));
  }
  for (const name of Object.keys(TEXT_SETTINGS) as TextSetting[]) {
    if (meta.settings[name] === undefined) defaults.set(`index.${name}`, TEXT_SETTINGS[name].default);
  }
  return defaults;
}

/** `PUT /{target}/_settings`: applies the dynamic settings of `body` to every selected collection. */
export async function putCollectionSettings(context: NodeContext, target: string, body: unknown): Promise<{ acknowledged: true }> {
  const update = parseSettingsUpdate(body);
  const selected = resolveCollections(context, target);
  if (update.staticSettings.length > 0) {
    const indices = selected.map((hosted) => `${hosted.meta.name}/${hosted.meta.uuid}`).join(', ');
    throw new EngineError('illegal_argument', `Can't update non dynamic settings [[${update.staticSettings.join(', ')}]] for open indices [[${indices}]]`);
  }
  if (update.numberOfReplicas !== undefined || Object.keys(update.limits).length > 0 || Object.keys(update.text).length > 0) {
    for (const hosted of selected) {
      try {
        await context.coordinator.updateCollectionSettings(hosted.meta.name, { ...update.limits, ...update.text, number_of_replicas: update.numberOfReplicas });
      } catch (error) {
        throw asNodeError(error);
      }
    }
    await context.router.waitForRevision(context.coordinator.revision);
  }
  return { acknowledged: true };
}
