/**
 * The collection service: collections, their mappings and namespaces (the routes of
 * src/api/routes/{collections,namespaces,cat}.ts). Thin wrappers over collections.ts; deleting a
 * collection or a namespace moves it to the trash (src/trash). Each runs as a tracked request.
 */
import type { DeleteCollectionsResponse, DeleteNamespaceResponse, TrashService } from '../trash/trash-service.ts';
import { getCollectionSettings, putCollectionSettings } from './collection-settings-api.ts';
import { collectionStats, type CollectionStatsResponse } from './collection-stats.ts';
import * as collections from './collections.ts';
import type { ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';

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
  getMapping(target: string): Promise<ReturnType<typeof collections.getMappings>> {
    return this.requests.track(async () => collections.getMappings(this.context, target));
  }

  /** `PUT /{target}/_mapping` with a mapping body `{dynamic?, properties}`. */
  putMapping(target: string, body: unknown): Promise<collections.Acknowledged> {
    return this.requests.track(() => collections.putMappings(this.context, target, body));
  }

  /** `GET /_stats`, `GET /{target}/_stats`: docs and store per collection and in total. */
  stats(target: string, options: ResolveOptions = {}): Promise<CollectionStatsResponse> {
    return this.requests.track(() => collectionStats(this.context, target, options));
  }

  /** `GET /{target}/_settings`. */
  getSettings(target: string, options: ResolveOptions = {}): Promise<ReturnType<typeof getCollectionSettings>> {
    return this.requests.track(async () => getCollectionSettings(this.context, target, options));
  }

  /** `PUT /{target}/_settings`: dynamic settings applied, static ones refused. */
  putSettings(target: string, body: unknown): Promise<{ acknowledged: true }> {
    return this.requests.track(() => putCollectionSettings(this.context, target, body));
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
}
