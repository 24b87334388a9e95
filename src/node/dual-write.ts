/**
 * Dual write (OpenSearch's `index.dual_write.*` settings): every write a collection with
 * `index.dual_write.index_name` applies is repeated on that target collection, as a plain index of
 * the document the write left behind. An index or create sends the same document text (a generated
 * id gets its own generated id on the target); an update that changed the document sends the
 * whole merged document; a delete that found its document sends `{"_tombstone": true}` under the
 * same id, or deletes it there when `index.dual_write.soft_deletes_enabled` is false. A write that
 * failed, a noop update and a delete of a missing document send nothing.
 *
 * The mirror is written after the source write is acknowledged, so it is not atomic with it: a
 * crash between the two leaves the target one write behind. Mirror writes are not mirrored again.
 */
import { EngineError } from '../engine/errors.ts';
import { documentSeqNo } from '../engine/shard/seq-no.ts';
import type { BulkItem, BulkItemResult, BulkResponse } from './bulk.ts';
import { storedDocumentText, type UpdateResponse, type WriteResponse } from './documents.ts';
import type { NodeContext } from './node-context.ts';

/** Where a collection's writes are mirrored, or null when they are not. */
export interface DualWriteTarget {
  collection: string;
  softDeletes: boolean;
}

/** The source document an update sends: the body of a tombstone, or the stored text. */
const TOMBSTONE = '{"_tombstone":true}';

/** The dual-write target of collection `name` (a concrete name), or null. */
export function dualWriteTarget(context: NodeContext, name: string): DualWriteTarget | null {
  const hosted = context.router.findCollection(name);
  const target = hosted?.meta.settings['dual_write.index_name'];
  if (hosted === undefined || target === undefined || target === '') return null;
  return { collection: target, softDeletes: hosted.meta.settings['dual_write.soft_deletes_enabled'] !== 'false' };
}

/** What one source write asks of the target: the item to send, or null for nothing. */
async function mirrorItem(context: NodeContext, item: BulkItem, response: WriteResponse | UpdateResponse, routing: string | undefined): Promise<BulkItem | null> {
  const target = dualWriteTarget(context, response._index);

  if (target === null) return null;
  const base = { collection: target.collection, routing: item.routing ?? routing };
  switch (item.action) {
    case 'index':
    case 'create': {
      if (response.result !== 'created' && response.result !== 'updated') return null;
      const text = item.text ?? storedDocumentText(JSON.stringify(item.body));
      return { action: 'index', ...base, id: item.id === undefined ? undefined : response._id, text };
    }
    case 'update': {
      if (response.result !== 'created' && response.result !== 'updated') return null;
      const hosted = context.router.collection(response._index);
      const { handle } = context.router.document(hosted, response._id, item.routing ?? routing);
      const document = await handle.get(response._id);
      // A later write changed the document again: that write mirrors what it left.
      if (document === null || documentSeqNo(document.seqNo) !== response._seq_no) return null;
      return { action: 'index', ...base, id: response._id, text: storedDocumentText(document.sourceText ?? JSON.stringify(document.source)) };
    }
    case 'delete':
      if (response.result !== 'deleted') return null;
      if (!target.softDeletes) return { action: 'delete', ...base, id: response._id };
      return { action: 'index', ...base, id: response._id, text: storedDocumentText(TOMBSTONE) };
    default:
      return null;
  }
}

/** Sends bulk items (mirror writes, which are never mirrored again). */
export type MirrorWriter = (items: readonly BulkItem[]) => Promise<BulkResponse>;

/**
 * The bulk answer with each mirrored item's target write attached (`mirror`; the answer lists it
 * right after its item, as OpenSearch does); a mirrored update is listed as the write it became
 * (`create` when it inserted its upsert document, `index` otherwise). `routing` is the URL's
 * default.
 */
export async function withMirrors(context: NodeContext, items: readonly BulkItem[], answer: BulkResponse, write: MirrorWriter, routing?: string): Promise<BulkResponse> {
  const mirrorOf = async (result: BulkItemResult, position: number): Promise<BulkItem | null> => {
    if ('error' in result) return null;
    try {
      return await mirrorItem(context, items[position], result.response, routing);
    } catch (error) {
      context.logger.warn({ collection: result.response._index, id: result.response._id }, `dual write: reading the updated document failed: ${String(error)}`);
      return null;
    }
  };
  const mirrors = await Promise.all(answer.items.map(mirrorOf));
  const sent = mirrors.filter((mirror): mirror is BulkItem => mirror !== null);
  if (sent.length === 0) return answer;
  const mirrored = await write(sent);
  let next = 0;
  const results = answer.items.map((result, position): BulkItemResult => {
    if (mirrors[position] === null || 'error' in result) return result;
    const action = result.action !== 'update' ? result.action : result.response.result === 'created' ? 'create' : 'index';
    return { ...result, action, mirror: mirrored.items[next++] };
  });
  return { took: answer.took + mirrored.took, errors: answer.errors || mirrored.errors, items: results };
}

/** Mirrors one single-document write (index, update, delete); a failed mirror is logged, the source's answer stands. */
export async function mirrorSingle(context: NodeContext, item: BulkItem, response: WriteResponse | UpdateResponse, write: MirrorWriter): Promise<void> {
  const mirror = await mirrorItem(context, item, response, undefined);
  if (mirror === null) return;
  const answer = await write([mirror]);
  const failed = answer.items[0];
  if (failed !== undefined && 'error' in failed) {
    const error = failed.error instanceof EngineError ? failed.error.message : String(failed.error);
    context.logger.warn({ collection: response._index, id: response._id, target: mirror.collection }, `dual write to the target failed: ${error}`);
  }
}
