/**
 * What the node's request handlers (documents, bulk, search, collections) share: the coordinator,
 * the router to shard copies, the dynamic-mapping updater and the current settings.
 */
import type { Logger } from 'pino';
import type { Coordinator } from '../cluster/coordinator.ts';
import type { Router } from '../cluster/router.ts';
import type { NodeSettingValues } from '../config/load-config.ts';
import type { NodeCounters } from '../ops/stats/node-counters.ts';
import type { MappingUpdater } from './mapping-updater.ts';

/** Shared state of the request handlers. */
export interface NodeContext {
  readonly nodeId: string;
  readonly coordinator: Coordinator;
  /** The one way to collections and their shard copies. */
  readonly router: Router;
  readonly mappings: MappingUpdater;
  readonly logger: Logger;
  /** The node's current setting values (dynamic settings may change between calls). */
  settings(): Readonly<NodeSettingValues>;
  /** Counters of writes, updates and bulk requests for node stats (src/ops/stats). */
  readonly stats: NodeCounters;
}
