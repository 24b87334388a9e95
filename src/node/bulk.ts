/**
 * `_bulk`: every item is validated and routed like a single write; each shard then parses the
 * document texts of its items (`prepareBatch`: a document line crosses as the bytes the client
 * sent and is parsed once, where its shard runs), the mapping changes of all items of a collection
 * are applied in one catalog change, and each shard writes its items (`writePrepared`, one group
 * commit), all shards concurrently. Items fail one by one; the valid ones are applied. Results come
 * back in request order. A document line that does not parse fails its item with the parse error,
 * whatever else is wrong with the item, and is not counted in the node's write statistics, as when
 * the request parser refused it.
 */
import type { ShardHandle } from '../cluster/shard-handle.ts';
import type { BatchOp, PreparedItem, TextIndexOp, WriteBatchRequest } from '../cluster/write-batch.ts';
import { EngineError, TroveError } from '../engine/errors.ts';
import type { WriteResult } from '../engine/shard/operations.ts';
import {
  notAnObjectError,
  prepareDelete,
  prepareIndex,
  prepareTextIndex,
  prepareUpdate,
  renderWrite,
  type DocumentText,
  type PreparedWrite,
  type UpdateResponse,
  type WriteResponse,
} from './documents.ts';
import type { MappingCandidate } from './mapping-updater.ts';
import type { NodeContext } from './node-context.ts';
import type { SourceOptions } from './source-filter.ts';

export type { DocumentText };

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
  /** `version` and `version_type` of the action line (external versioning of index and delete). */
  version?: number;
  versionType?: 'internal' | 'external' | 'external_gte';
  retryOnConflict?: number;
  /** `_source` of an update action line (what the item's `get` returns). */
  source?: SourceOptions;
  /** ES `require_alias` of the action line: the item's target must be an alias (overrides the URL's). */
  requireAlias?: boolean;
  /** Document (index, create) or update body (update), parsed. */
  body?: unknown;
  /** The document line of an index or create, unparsed (instead of `body`). */
  text?: DocumentText;
}

/** Defaults from the request URL. */
export interface BulkDefaults {
  collection?: string;
  routing?: string;
  /** ES `require_alias` of the URL: every item's target must be an alias unless its line says otherwise. */
  requireAlias?: boolean;
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

/** Outcome of one item, and of the write a dual-write target received for it (src/node/dual-write.ts). */
export type BulkItemResult = (BulkItemSuccess | BulkItemFailure) & { mirror?: BulkItemResult };

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
function groupIndexes(prepared: ReadonlyArray<PreparedWrite<BatchOp> | null>, keyOf: (write: PreparedWrite<BatchOp>) => string): Map<string, number[]> {
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

function prepareItem(context: NodeContext, item: BulkItem, defaults: BulkDefaults): PreparedWrite<BatchOp> {
  const name = item.collection ?? defaults.collection;
  if (name === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: index is missing;');
  const { router } = context;
  const hosted = router.collection(name);
  const params = { routing: router.writeRouting(name, item.routing ?? defaults.routing), ifSeqNo: item.ifSeqNo, ifPrimaryTerm: item.ifPrimaryTerm, version: item.version, versionType: item.versionType };
  switch (item.action) {
    case 'index':
    case 'create':
      if (item.text) return prepareTextIndex(router, hosted, item.id, item.text, { ...params, opType: item.action === 'create' ? 'create' : 'index' });
      return prepareIndex(router, hosted, item.id, item.body, { ...params, opType: item.action === 'create' ? 'create' : 'index' });
    case 'delete':
      return prepareDelete(router, hosted, item.id as string, params);
    case 'update':
      return prepareUpdate(router, hosted, item.id as string, item.body, { ...params, source: item.source });
    default:
      throw new EngineError('illegal_argument', `unknown bulk action [${String(item.action)}]`);
  }
}

/**
 * An update of a document an earlier item of the same request writes (in its shard, so in order)
 * skips the mapping step's check that its document exists: the document exists by the time the
 * update is applied, and if the earlier write fails the shard itself answers document_missing.
 */
function admitAfterEarlierWrites(prepared: Array<PreparedWrite<BatchOp> | null>): void {
  const written = new Set<string>();
  for (const write of prepared) {
    if (write === null) continue;
    const key = `${write.target.handle.uuid}\u0000${write.op.id}`;
    const { op } = write;
    if (op.kind === 'update' && write.mapping.admit !== undefined && written.has(key)) write.mapping = { ...write.mapping, admit: undefined };
    if (op.kind === 'index' || op.kind === 'index_text' || (op.kind === 'update' && (op.upsert !== undefined || op.docAsUpsert === true))) written.add(key);
    if (op.kind === 'delete') written.delete(key);
  }
}

/** The parse error of a document text, or null when it parses here. */
function textError(text: DocumentText): TroveError | null {
  try {
    text.parse();
    return null;
  } catch (error) {
    if (error instanceof TroveError) return error;
    throw error;
  }
}

/** The request of one shard's items: their ops, document texts placed back to back in one buffer. */
function batchRequest(prepared: ReadonlyArray<PreparedWrite<BatchOp> | null>, items: readonly BulkItem[], indexes: readonly number[]): WriteBatchRequest {
  let bytes = 0;
  for (const index of indexes) bytes += items[index].text?.bytes.length ?? 0;
  const texts = new Uint8Array(bytes);
  let maxDepth = 0;
  let offset = 0;
  const ops = indexes.map((index): BatchOp => {
    const op = prepared[index]!.op;
    const text = items[index].text;
    if (op.kind !== 'index_text' || !text) return op;
    texts.set(text.bytes, offset);
    maxDepth = text.maxDepth;
    const placed: TextIndexOp = { ...op, start: offset, end: offset + text.bytes.length };
    offset += text.bytes.length;
    return placed;
  });
  return { ops, texts, maxDepth };
}

/** A shard's part of the request: its items, and the batch its copy keeps between the two steps. */
interface ShardPart {
  handle: ShardHandle;
  indexes: number[];
  batch: number | null;
  started: number;
}

/** Executes a bulk request (see the module comment). */
export async function bulk(context: NodeContext, items: readonly BulkItem[], defaults: BulkDefaults = {}): Promise<BulkResponse> {
  const started = Date.now();
  const prepared: Array<PreparedWrite<BatchOp> | null> = [];
  const outcomes: Array<BulkItemResult | null> = [];
  /** Text items whose text their shard parsed: their failures are no longer parse errors. */
  const parsed = new Set<number>();
  /** Items failed by their document text (not counted in the write statistics). */
  const unparsed = new Set<number>();
  const candidates = new Map<number, MappingCandidate>();
  const fail = (index: number, error: unknown): void => {
    if (!isTyped(error)) throw error;
    const item = items[index];
    if (item.text && !parsed.has(index)) {
      const parseError = textError(item.text);
      if (parseError) {
        unparsed.add(index);
        outcomes[index] = { action: item.action, index: item.collection ?? defaults.collection ?? null, id: item.id ?? null, error: parseError };
        prepared[index] = null;
        return;
      }
      parsed.add(index);
    }
    const op = prepared[index]?.op;
    outcomes[index] = {
      action: item.action,
      index: prepared[index]?.target.collection.meta.name ?? item.collection ?? defaults.collection ?? null,
      id: op?.id ?? item.id ?? null,
      error,
    };
    prepared[index] = null;
  };
  const adopt = (index: number, finding: PreparedItem): void => {
    if (items[index].text) parsed.add(index);
    if (finding === 'unparsed') {
      parsed.delete(index);
      fail(index, new EngineError('mapper_parsing', 'failed to parse the document'));
    } else if (finding === 'not_object') fail(index, notAnObjectError());
    else if (finding !== 'ready') candidates.set(index, { sources: [finding.newFields] });
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

  // Each shard parses its document texts and keeps its batch.
  const parts = [...groupIndexes(prepared, (write) => write.target.handle.uuid).values()].map(
    (indexes): ShardPart => ({ handle: prepared[indexes[0]]!.target.handle, indexes, batch: null, started: performance.now() }),
  );
  await Promise.all(
    parts.map(async (part) => {
      try {
        const answer = await part.handle.prepareBatch(batchRequest(prepared, items, part.indexes));
        part.batch = answer.batch;
        answer.items.forEach((finding, position) => adopt(part.indexes[position], finding));
      } catch (error) {
        for (const index of part.indexes) fail(index, error);
      }
    }),
  );

  // One mapping change per collection, covering all of its items.
  admitAfterEarlierWrites(prepared);
  const byCollection = groupIndexes(prepared, (write) => write.target.collection.meta.name);
  await Promise.all(
    [...byCollection].map(async ([name, indexes]) => {
      try {
        const refused = await context.mappings.ensure(name, indexes.map((index) => candidates.get(index) ?? prepared[index]!.mapping));
        refused.forEach((error, position) => {
          if (error) fail(indexes[position], error);
        });
      } catch (error) {
        for (const index of indexes) fail(index, error);
      }
    }),
  );

  // Each shard writes what is left of its batch, in request order, with one group commit.
  await Promise.all(
    parts.map(async ({ handle, indexes, batch, started: partStarted }) => {
      if (batch === null) return;
      const live = indexes.filter((index) => prepared[index] !== null);
      if (live.length === 0) {
        await handle.freeContext(batch).catch(() => undefined);
        return;
      }
      let results: Array<WriteResult | EngineError | null>;
      try {
        const skip = indexes.flatMap((index, position) => (prepared[index] === null ? [position] : []));
        results = await handle.writePrepared(batch, skip);
      } catch (error) {
        for (const index of live) fail(index, error);
        return;
      }
      const perItemMs = (performance.now() - partStarted) / live.length;
      results.forEach((result, position) => {
        const index = indexes[position];
        if (result === null || prepared[index] === null) return;
        if (result instanceof EngineError) fail(index, result);
        else {
          const { kind } = prepared[index]!.op;
          context.stats.recordWrite(kind === 'index_text' ? 'index' : kind, result, perItemMs);
          outcomes[index] = { action: items[index].action, response: renderWrite(prepared[index]!, result) };
        }
      });
    }),
  );

  const finished = outcomes as BulkItemResult[];
  let failedItems = 0;
  for (const [index, outcome] of finished.entries()) {
    if (!('error' in outcome) || unparsed.has(index)) continue;
    failedItems++;
    context.stats.recordWrite(outcome.action === 'create' ? 'index' : outcome.action, outcome.error, 0);
  }
  const took = Date.now() - started;
  context.stats.recordBulk(finished.length - unparsed.size, failedItems, took);
  return { took, errors: failedItems + unparsed.size > 0, items: finished };
}
