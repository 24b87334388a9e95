/**
 * `_mget`: several realtime gets in one request. The body is `{docs: [{_index?, _id, routing?,
 * _source?, stored_fields?}]}` or, with a collection in the URL, `{ids: [...]}`. A document whose collection is
 * missing gets an error entry; a missing document gets `found: false`.
 */
import type { ShardHandle } from '../cluster/shard-handle.ts';
import { EngineError, TroveError } from '../engine/errors.ts';
import { checkId, getView, renderGet, type GetResponse, type GetView } from './documents.ts';
import type { NodeContext } from './node-context.ts';
import type { SourceOptions } from './source-filter.ts';

/** Defaults from the request URL and query string. */
export interface MultiGetParams {
  collection?: string;
  routing?: string;
  /** Query-string `_source` options, used by entries that do not set their own. */
  source?: SourceOptions;
  /** Query-string `stored_fields`, used by entries that do not set their own. */
  storedFields?: readonly string[];
  /** `realtime=false`: read what searches see (see GetParams). */
  realtime?: boolean;
}

/** An entry that could not be looked up at all (unknown collection, invalid id). */
export interface MultiGetFailure {
  _index: string | null;
  _id: string | null;
  error: TroveError;
}

/** The `_mget` response. */
export interface MultiGetResponse {
  docs: Array<GetResponse | MultiGetFailure>;
}

interface MultiGetEntry {
  collection: string | undefined;
  id: unknown;
  routing: string | undefined;
  source: SourceOptions | undefined;
  storedFields: readonly string[] | undefined;
}

function parseEntries(body: unknown, params: MultiGetParams): MultiGetEntry[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new EngineError('parsing', 'the _mget body must be an object with [docs] or [ids]');
  }
  const { docs, ids } = body as { docs?: unknown; ids?: unknown };
  if (Array.isArray(ids)) {
    if (params.collection === undefined) {
      throw new EngineError('action_request_validation', 'Validation Failed: 1: [ids] needs a collection in the URL;');
    }
    return ids.map((id) => ({ collection: params.collection, id, routing: params.routing, source: params.source, storedFields: params.storedFields }));
  }
  if (!Array.isArray(docs)) throw new EngineError('action_request_validation', 'Validation Failed: 1: no documents to get;');
  return docs.map((doc): MultiGetEntry => {
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      throw new EngineError('parsing', 'every entry of [docs] must be an object with [_id]');
    }
    const entry = doc as Record<string, unknown>;
    const collection = typeof entry._index === 'string' ? entry._index : params.collection;
    const routing = typeof entry.routing === 'string' ? entry.routing : params.routing;
    const source = entry._source !== undefined ? { source: entry._source } : params.source;
    return { collection, id: entry._id, routing, source, storedFields: entryStoredFields(entry.stored_fields) ?? params.storedFields };
  });
}

/** An entry's own `stored_fields` (a name or a list of names); undefined when it sets none. */
function entryStoredFields(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const names = Array.isArray(value) ? value : [value];
  if (!names.every((name): name is string => typeof name === 'string')) throw new EngineError('parsing', '[stored_fields] of an _mget entry must be a field name or an array of them');
  return names;
}

/** Executes an `_mget` request: one `multiGet` per shard copy, all shards concurrently. */
export async function multiGet(context: NodeContext, body: unknown, params: MultiGetParams = {}): Promise<MultiGetResponse> {
  const entries = parseEntries(body, params);
  if (entries.length === 0) throw new EngineError('action_request_validation', 'Validation Failed: 1: no documents to get;');
  const docs: Array<GetResponse | MultiGetFailure | null> = entries.map(() => null);
  const byShard = new Map<ShardHandle, Array<{ position: number; collection: string; id: string; view: GetView }>>();
  const fail = (position: number, error: unknown): void => {
    if (!(error instanceof TroveError)) throw error;
    const entry = entries[position]!;
    docs[position] = { _index: entry.collection ?? null, _id: typeof entry.id === 'string' ? entry.id : null, error };
  };
  entries.forEach((entry, position) => {
    try {
      if (entry.collection === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: index is missing;');
      const hosted = context.router.collection(entry.collection);
      checkId(entry.id);
      const view = getView(hosted, entry.source, entry.storedFields);
      const { handle } = context.router.document(hosted, entry.id, context.router.writeRouting(entry.collection, entry.routing));
      const group = byShard.get(handle) ?? [];
      group.push({ position, collection: hosted.meta.name, id: entry.id, view });
      byShard.set(handle, group);
    } catch (error) {
      fail(position, error);
    }
  });
  await Promise.all(
    [...byShard].map(async ([handle, group]) => {
      try {
        const found = await handle.multiGet(group.map((item) => item.id), params.realtime === false ? { realtime: false } : undefined);
        group.forEach((item, index) => (docs[item.position] = renderGet(item.collection, item.id, found[index] ?? null, item.view)));
      } catch (error) {
        for (const item of group) fail(item.position, error);
      }
    }),
  );
  return { docs: docs as Array<GetResponse | MultiGetFailure> };
}
