/**
 * The collection service: collections, their mappings and namespaces (the routes of
 * src/api/routes/{collections,namespaces,cat}.ts). Thin wrappers over collections.ts; deleting a
 * collection or a namespace moves it to the trash (src/trash). Each runs as a tracked request.
 */
import type { DeleteCollectionsResponse, DeleteNamespaceResponse, TrashService } from '../trash/trash-service.ts';
import { getCollectionSettings, putCollectionSettings, type GetSettingsOptions } from './collection-settings-api.ts';
import { fieldCapabilities, type CollectionMatcher, type FieldCapsRequest, type FieldCapsResponse } from './field-caps.ts';
import { collectionStats, type CollectionStatsOptions, type CollectionStatsResponse } from './collection-stats.ts';
import * as aliases from './aliases-api.ts';
import { EngineError } from '../engine/errors.ts';
import * as collections from './collections.ts';
import type { ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';
import { refreshCollections, type RefreshShards } from './refresh.ts';

/** Collection, mapping and namespace operations of the node; see the module comment. */
export class CollectionService {
  constructor(
    private readonly context: NodeContext,
    private readonly requests: RequestTracker,
    private readonly trash: TrashService,
  ) {}

  /** `PUT /{collection}` with the ES body `{namespace?, settings?, mappings?}`. */
  createCollection(name: string, body: unknown): Promise<collections.CreateCollectionResponse> {
    return this.requests.track(() => collections.createCollection(this.context, name, body));
  }

  /** `GET /{target}`. */
  getCollection(target: string): Promise<Record<string, Record<string, unknown>>> {
    return this.requests.track(async () => collections.getCollections(this.context, target));
  }

  /** `DELETE /{names}` (comma list of concrete names): each collection moves to the trash. */
  deleteCollection(target: string): Promise<DeleteCollectionsResponse> {
    return this.requests.track(() => this.trash.deleteCollections(target));
  }

  /** Every collection with doc counts, store size, shard counts and health (`_cat/indices`). */
  listCollections(): Promise<collections.CollectionSummary[]> {
    return this.requests.track(() => collections.listCollections(this.context));
  }

  /** `GET /{target}/_mapping`. */
  getMapping(target: string, options: ResolveOptions = {}): Promise<ReturnType<typeof collections.getMappings>> {
    return this.requests.track(async () => collections.getMappings(this.context, target, options));
  }

  /** `PUT /{target}/_mapping` with a mapping body `{dynamic?, properties}`. */
  putMapping(target: string, body: unknown): Promise<collections.Acknowledged> {
    return this.requests.track(() => collections.putMappings(this.context, target, body));
  }

  /** `GET /_stats[/{metric}]`, `GET /{target}/_stats[/{metric}]`: the sections asked, per collection and in total. */
  stats(target: string, options: CollectionStatsOptions = {}): Promise<CollectionStatsResponse> {
    return this.requests.track(() => collectionStats(this.context, target, options));
  }

  /** `GET /{target}/_settings[/{names}]` (flat, with defaults, as the options say). */
  getSettings(target: string, options: GetSettingsOptions = {}): Promise<ReturnType<typeof getCollectionSettings>> {
    return this.requests.track(async () => getCollectionSettings(this.context, target, options));
  }

  /** `_field_caps` over the collections `target` selects; `matches` answers an `index_filter`. */
  fieldCaps(target: string, request: FieldCapsRequest, matches: CollectionMatcher, options: ResolveOptions = {}): Promise<FieldCapsResponse> {
    return this.requests.track(() => fieldCapabilities(this.context, target, request, matches, options));
  }

  /** `PUT /{target}/_settings`: dynamic settings applied, static ones refused. */
  putSettings(target: string, body: unknown): Promise<{ acknowledged: true }> {
    return this.requests.track(() => putCollectionSettings(this.context, target, body));
  }

  /** `PUT|POST [/{target}]/_alias[/{name}]` with the optional body `{index?, alias?, filter?, routing?, index_routing?, search_routing?, is_write_index?, is_hidden?}`. */
  putAlias(target: string | undefined, name: string | undefined, body: unknown): Promise<aliases.AliasesAcknowledged> {
    return this.requests.track(async () => {
      await aliases.applyAliasActions(this.context, [aliases.putAliasAction(this.context, target, name, body)]);
      return { acknowledged: true };
    });
  }

  /** `DELETE /{target}/_alias/{names}`: 404 aliases_not_found when no alias matches. */
  deleteAlias(target: string, names: string): Promise<aliases.AliasesAcknowledged> {
    return this.requests.track(async () => {
      await aliases.applyAliasActions(this.context, [{ kind: 'remove', indices: target.split(','), aliases: names.split(',') }]);
      return { acknowledged: true };
    });
  }

  /**
   * `POST /_aliases`: the actions as one catalog change. A `remove_index` moves its collection to
   * the trash (one collection per request: the trash records it before the change commits).
   */
  updateAliases(body: unknown): Promise<aliases.AliasesAcknowledged> {
    return this.requests.track(async () => {
      const actions = aliases.parseAliasActions(this.context, body);
      const removed = aliases.removedByActions(this.context, actions);
      if (removed.length > 1) {
        throw new EngineError('illegal_argument', `[remove_index] removes one collection per request, got [${removed.join(', ')}]; send one request per collection`);
      }
      if (removed.length === 0) await aliases.applyAliasActions(this.context, actions);
      else await this.trash.deleteCollectionThrough(removed[0]!, () => aliases.applyAliasActions(this.context, actions));
      return { acknowledged: true };
    });
  }

  /** `GET [/{target}]/_alias[/{names}]` over the collections `visible` accepts. */
  getAliases(target: string | undefined, names: string | undefined, visible: (collection: string) => boolean): Promise<aliases.AliasesView> {
    return this.requests.track(async () => aliases.getAliases(this.context, target, names, visible));
  }

  /** `_cat/aliases` rows of the collections `visible` accepts. */
  aliasRows(visible: (collection: string) => boolean): Promise<aliases.AliasRow[]> {
    return this.requests.track(async () => aliases.aliasRows(this.context, visible));
  }

  /** `PUT /_namespace/{name}`. */
  createNamespace(name: string): Promise<collections.Acknowledged & { namespace: string }> {
    return this.requests.track(() => collections.createNamespace(this.context, name));
  }

  /** `GET /_namespace`. */
  listNamespaces(): Promise<collections.NamespaceView[]> {
    return this.requests.track(async () => collections.listNamespaces(this.context));
  }

  /** `GET /_namespace/{name}`. */
  getNamespace(name: string): Promise<collections.NamespaceView> {
    return this.requests.track(async () => collections.getNamespace(this.context, name));
  }

  /** `DELETE /_namespace/{name}`: the namespace and all its collections move to the trash as one item. */
  deleteNamespace(name: string): Promise<DeleteNamespaceResponse> {
    return this.requests.track(() => this.trash.deleteNamespace(name));
  }

  /** `POST [/{target}]/_refresh`: refreshes every copy of the selected collections that make writes visible on refresh (src/node/refresh.ts). */
  refresh(target: string, options: ResolveOptions = {}): Promise<{ _shards: RefreshShards }> {
    return this.requests.track(async () => ({ _shards: await refreshCollections(this.context, collections.resolveCollections(this.context, target, options)) }));
  }
}
