/**
 * `_bulk`: every item is validated and routed like a single write, the mapping changes of all
 * items of a collection are applied in one catalog change, then each shard gets its items as one
 * `writeBatch` (one group commit), all shards concurrently. Items fail one by one; the valid ones
 * are applied. Results come back in request order.
 */
import { EngineError, TroveError } from '../engine/errors.ts';
import type { WriteResult } from '../engine/shard/operations.ts';
import {
  prepareDelete,
  prepareIndex,
  prepareUpdate,
  renderWrite,
  type PreparedWrite,
  type UpdateResponse,
  type WriteResponse,
} from './documents.ts';
import type { NodeContext } from './node-context.ts';
import type { SourceOptions } from './source-filter.ts';

/** The four bulk actions. */
export type BulkAction = 'index' | 'create' | 'update' | 'delete';

/** One bulk item: the action line's metadata and, except for delete, the following body line. */
export interface BulkItem {
  action: BulkAction;
  /** `_index` of the action line; falls back to the collection in the URL. */
  collection?: string;
  id?: string;
  routing?: string;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  retryOnConflict?: number;
  /** `_source` of an update action line (what the item's `get` returns). */
  source?: SourceOptions;
  /** Document (index, create) or update body (update). */
  body?: unknown;
}

/** Defaults from the request URL. */
export interface BulkDefaults {
  collection?: string;
  routing?: string;
}

/** A failed item: the error keeps its code for the API's error table. */
export interface BulkItemFailure {
  action: BulkAction;
  index: string | null;
  id: string | null;
  error: TroveError;
}

/** A completed item with its Elasticsearch write response (delete of a missing id is `not_found`). */
export interface BulkItemSuccess {
  action: BulkAction;
  response: WriteResponse | UpdateResponse;
}

/** Outcome of one item. */
export type BulkItemResult = BulkItemSuccess | BulkItemFailure;

/** The bulk response, before the API renders items as `{[action]: {..., status}}`. */
export interface BulkResponse {
  took: number;
  errors: boolean;
  items: BulkItemResult[];
}

function isTyped(error: unknown): error is TroveError {
  return error instanceof TroveError;
}

/** Positions of the still-valid writes, grouped by a key, in request order. */
function groupIndexes(prepared: ReadonlyArray<PreparedWrite | null>, keyOf: (write: PreparedWrite) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  prepared.forEach((write, index) => {
    if (!write) return;
    const key = keyOf(write);
    const group = groups.get(key);
    if (group) group.push(index);
    else groups.set(key, [index]);
  });
  return groups;
}

function prepareItem(context: NodeContext, item: BulkItem, defaults: BulkDefaults): PreparedWrite {
  const name = item.collection ?? defaults.collection;
  if (name === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: index is missing;');
  const { router } = context;
  const hosted = router.collection(name);
  const params = { routing: item.routing ?? defaults.routing, ifSeqNo: item.ifSeqNo, ifPrimaryTerm: item.ifPrimaryTerm };
  switch (item.action) {
    case 'index':
    case 'create':
      return prepareIndex(router, hosted, item.id, item.body, { ...params, opType: item.action === 'create' ? 'create' : 'index' });
    case 'delete':
      return prepareDelete(router, hosted, item.id as string, params);
    case 'update':
      return prepareUpdate(router, hosted, item.id as string, item.body, { ...params, source: item.source });
    default:
      throw new EngineError('illegal_argument', `unknown bulk action [${String(item.action)}]`);
  }
}

/** Executes a bulk request (see the module comment). */
export async function bulk(context: NodeContext, items: readonly BulkItem[], defaults: BulkDefaults = {}): Promise<BulkResponse> {
  const started = Date.now();
  const prepared: Array<PreparedWrite | null> = [];
  const outcomes: Array<BulkItemResult | null> = [];
  const fail = (index: number, error: unknown): void => {
    if (!isTyped(error)) throw error;
    const item = items[index];
    const op = prepared[index]?.op;
    outcomes[index] = {
      action: item.action,
      index: prepared[index]?.target.collection.meta.name ?? item.collection ?? defaults.collection ?? null,
      id: op?.id ?? item.id ?? null,
      error,
    };
    prepared[index] = null;
  };

  for (let index = 0; index < items.length; index++) {
    outcomes.push(null);
    prepared.push(null);
    try {
      prepared[index] = prepareItem(context, items[index], defaults);
    } catch (error) {
      fail(index, error);
    }
  }

  // One mapping change per collection, covering all of its items.
  const byCollection = groupIndexes(prepared, (write) => write.target.collection.meta.name);
  await Promise.all(
    [...byCollection].map(async ([name, indexes]) => {
      try {
        const refused = await context.mappings.ensure(name, indexes.map((index) => prepared[index]!.mapping));
        refused.forEach((error, position) => {
          if (error) fail(indexes[position], error);
        });
      } catch (error) {
        for (const index of indexes) fail(index, error);
      }
    }),
  );

  // One writeBatch per shard, in request order within the shard.
  const byShard = groupIndexes(prepared, (write) => write.target.handle.uuid);
  await Promise.all(
    [...byShard.values()].map(async (indexes) => {
      const first = prepared[indexes[0]]!;
      let results: Array<WriteResult | EngineError>;
      const batchStarted = performance.now();
      try {
        results = await first.target.handle.writeBatch(indexes.map((index) => prepared[index]!.op));
      } catch (error) {
        for (const index of indexes) fail(index, error);
        return;
      }
      const perItemMs = (performance.now() - batchStarted) / indexes.length;
      results.forEach((result, position) => {
        const index = indexes[position];
        if (result instanceof EngineError) fail(index, result);
        else {
          context.stats.recordWrite(prepared[index]!.op.kind, result, perItemMs);
          outcomes[index] = { action: items[index].action, response: renderWrite(prepared[index]!, result) };
        }
      });
    }),
  );

  const finished = outcomes as BulkItemResult[];
  let failedItems = 0;
  for (const outcome of finished) {
    if (!('error' in outcome)) continue;
    failedItems++;
    context.stats.recordWrite(outcome.action === 'create' ? 'index' : outcome.action, outcome.error, 0);
  }
  const took = Date.now() - started;
  context.stats.recordBulk(finished.length, failedItems, took);
  return { took, errors: failedItems > 0, items: finished };
}
