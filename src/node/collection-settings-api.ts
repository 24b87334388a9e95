/**
 * `GET /{target}/_settings` and `PUT /{target}/_settings`: a collection's settings in
 * Elasticsearch's shape, and changes to the dynamic ones. `number_of_replicas` is dynamic and is
 * applied to the catalog (health and write `_shards` follow it), and so are `max_result_window`
 * and `max_docvalue_fields_search` (null resets them); `refresh_interval` is accepted
 * with no effect (writes are searchable at once). `number_of_shards` and `number_of_routing_shards` are static: a body setting it
 * is refused whole with ES's message, and nothing changes.
 */
import { parseSettingsUpdate } from '../cluster/collection-settings.ts';
import { EngineError } from '../engine/errors.ts';
import { asNodeError } from './node-error.ts';
import { indexSettingsOf, resolveCollections, type ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** `GET /{target}/_settings`: `{<name>: {settings: {index: {...}}}}` for each selected collection. */
export function getCollectionSettings(context: NodeContext, target: string, options: ResolveOptions = {}): Record<string, { settings: { index: Record<string, string> } }> {
  const out: Record<string, { settings: { index: Record<string, string> } }> = {};
  for (const hosted of resolveCollections(context, target, options)) out[hosted.meta.name] = { settings: { index: indexSettingsOf(hosted.meta) } };
  return out;
}

/** `PUT /{target}/_settings`: applies the dynamic settings of `body` to every selected collection. */
export async function putCollectionSettings(context: NodeContext, target: string, body: unknown): Promise<{ acknowledged: true }> {
  const update = parseSettingsUpdate(body);
  const selected = resolveCollections(context, target);
  if (update.staticSettings.length > 0) {
    const indices = selected.map((hosted) => `${hosted.meta.name}/${hosted.meta.uuid}`).join(', ');
    throw new EngineError('illegal_argument', `Can't update non dynamic settings [[${update.staticSettings.join(', ')}]] for open indices [[${indices}]]`);
  }
  if (update.numberOfReplicas !== undefined || Object.keys(update.limits).length > 0) {
    for (const hosted of selected) {
      try {
        await context.coordinator.updateCollectionSettings(hosted.meta.name, { ...update.limits, number_of_replicas: update.numberOfReplicas });
      } catch (error) {
        throw asNodeError(error);
      }
    }
    await context.router.waitForRevision(context.coordinator.revision);
  }
  return { acknowledged: true };
}
