/**
 * A bulk request's writes for one shard, as they cross the shard handle: the document lines of
 * index and create items travel as the JSON text the client sent (one byte buffer per batch, so a
 * worker thread receives it by transfer), and the shard's side parses each text once. A batch is
 * written in two calls, so that the caller keeps a bulk request's all-or-nothing steps (dynamic
 * mapping for a whole collection) between them:
 *
 * 1. `prepareBatch` parses the texts and answers, per item, whether it is `ready`, whether its text
 *    does not parse (the caller reports the parse error it would have reported itself), is not an
 *    object, or brings fields the copy's mapping lacks (`new_fields`, with the parsed document, for
 *    the caller's dynamic mapping step). The parsed batch is kept under a number, like a search
 *    context, and freed by `freeContext` or after `SEARCH_CONTEXT_KEEP_ALIVE_MS`.
 * 2. `writePrepared` writes the kept batch in order, except the positions the caller failed, with
 *    one group commit; the stored source of a parsed text is that text, not a re-serialisation.
 */
import { dynamicMappingUpdate } from '../engine/mapping/dynamic.ts';
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { ExternalVersion, WriteOp } from '../engine/shard/operations.ts';

/** An index or create whose document is bytes `[start, end)` of its batch's `texts`, not yet parsed. */
export interface TextIndexOp {
  kind: 'index_text';
  id: string;
  opType?: 'index' | 'create';
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  externalVersion?: ExternalVersion;
  start: number;
  end: number;
}

/** One write of a batch: a parsed op, or an index whose document is still text. */
export type BatchOp = WriteOp | TextIndexOp;

/** The writes of one shard in request order, with the document texts they point into. */
export interface WriteBatchRequest {
  ops: BatchOp[];
  /** UTF-8 JSON texts, back to back (its own ArrayBuffer: it may be transferred). */
  texts: Uint8Array;
  /** Deepest object/array nesting a text may have; deeper ones count as not parsing. */
  maxDepth: number;
}

/** What preparing found for one item (see the module comment). */
export type PreparedItem = 'ready' | 'unparsed' | 'not_object' | { newFields: Record<string, unknown> };

/** The answer of `prepareBatch`: the kept batch's number and one finding per op. */
export interface PreparedBatch {
  batch: number;
  items: PreparedItem[];
}

/**
 * Parses the texts of `request` against the copy's `mapping`: the ops to write (a text op becomes
 * an index op whose `sourceText` is its text) and the findings. Ops that are not ready are null.
 */
export function parseBatch(request: WriteBatchRequest, mapping: Mapping): { ops: Array<WriteOp | null>; items: PreparedItem[] } {
  const ops: Array<WriteOp | null> = [];
  const items: PreparedItem[] = [];
  const texts = Buffer.from(request.texts.buffer, request.texts.byteOffset, request.texts.byteLength);
  for (const op of request.ops) {
    if (op.kind !== 'index_text') {
      ops.push(op);
      items.push('ready');
      continue;
    }
    const source = parseText(texts.toString('utf8', op.start, op.end), request.maxDepth);
    if (source === UNPARSED) {
      ops.push(null);
      items.push('unparsed');
      continue;
    }
    if (source === null || typeof source !== 'object' || Array.isArray(source)) {
      ops.push(null);
      items.push('not_object');
      continue;
    }
    const document = source as Record<string, unknown>;
    let bringsFields = true;
    try {
      bringsFields = dynamicMappingUpdate(mapping, document) !== null;
    } catch {
      // A refusal (strict mapping, a limit, a reserved name) is the caller's to report, from its mapping step.
    }
    const { start: _start, end: _end, kind: _kind, ...params } = op;
    // A view, not a copy: the WAL copies it into its frame, and the batch's buffer lives as long as
    // the mutable layer holding its documents' sources anyway.
    ops.push({ kind: 'index', ...params, source: document, sourceText: texts.subarray(op.start, op.end) });
    items.push(bringsFields ? { newFields: document } : 'ready');
  }
  return { ops, items };
}

const UNPARSED = Symbol('unparsed');

/**
 * The parsed text, or UNPARSED when the request's body parser would refuse it: JSON that does not
 * parse, nesting deeper than `maxDepth`, or a `__proto__` key (the rules of src/api/json-body.ts,
 * checked here on the parsed value, where they mean the same).
 */
function parseText(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return UNPARSED;
  }
  return withinLimits(value, 1, maxDepth) ? value : UNPARSED;
}

function withinLimits(value: unknown, depth: number, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > maxDepth) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!withinLimits(item, depth + 1, maxDepth)) return false;
    return true;
  }
  for (const key in value) {
    if (key === '__proto__') return false;
    if (!withinLimits((value as Record<string, unknown>)[key], depth + 1, maxDepth)) return false;
  }
  return true;
}
