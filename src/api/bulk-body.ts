/**
 * Parsing of a `_bulk` NDJSON body into items. Action lines must be well-formed (otherwise the
 * whole request is refused, nothing applied, as Elasticsearch does); a source line that does not
 * parse only fails its own item. The body is read as bytes: action lines and update bodies are
 * parsed here, while the document line of an index or create item stays the bytes the client sent
 * (`DocumentText`), parsed once where its shard runs; when it does not parse, the node layer asks
 * `parse()` for the same error this parser would have reported. A source line longer than
 * `indexing.max_document_bytes` fails its own item before anything parses it.
 */
import type { BulkAction, BulkItem, DocumentText } from '../node/bulk.ts';
import { oversizedDocument } from './document-size.ts';
import { ApiError } from './errors.ts';
import { MAX_JSON_DEPTH, parseJsonText } from './json-body.ts';

/** One entry of the parsed body: an item for the node, or an item that already failed here. */
export type ParsedBulkEntry =
  | { kind: 'item'; item: BulkItem }
  | { kind: 'failed'; action: BulkAction; index: string | null; id: string | null; error: ApiError };

const ACTIONS: ReadonlySet<string> = new Set(['index', 'create', 'update', 'delete']);

/** Metadata keys allowed in an action line, and where they go. */
const METADATA_KEYS: ReadonlySet<string> = new Set([
  '_index',
  '_id',
  // Mapping types are gone; OpenSearch still reads `_type` on an action line and ignores it.
  '_type',
  'routing',
  '_routing',
  'if_seq_no',
  'if_primary_term',
  'retry_on_conflict',
  '_source',
  'op_type',
  'require_alias',
  'version',
  'version_type',
]);

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** The lines of a body as byte ranges, without their `\n` and a `\r` before it. */
class BodyLines {
  readonly starts: number[] = [];
  readonly ends: number[] = [];

  constructor(readonly body: Buffer) {
    for (let start = 0; start <= body.length; ) {
      let end = body.indexOf(NEWLINE, start);
      if (end < 0) end = body.length;
      this.starts.push(start);
      this.ends.push(end > start && body[end - 1] === CARRIAGE_RETURN ? end - 1 : end);
      start = end + 1;
    }
  }

  get count(): number {
    return this.starts.length;
  }

  text(line: number): string {
    return this.body.toString('utf8', this.starts[line], this.ends[line]);
  }

  /** Length of line `line` in bytes. */
  byteLength(line: number): number {
    return this.ends[line]! - this.starts[line]!;
  }

  blank(line: number): boolean {
    return blankBytes(this.body, this.starts[line]!, this.ends[line]!);
  }
}

/** True when bytes `[start, end)` hold only JSON whitespace. */
function blankBytes(body: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index++) {
    const code = body[index];
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return false;
  }
  return true;
}

/** The document line `line` as it crosses to its shard. */
function documentText(lines: BodyLines, line: number): DocumentText {
  return {
    bytes: lines.body.subarray(lines.starts[line], lines.ends[line]),
    maxDepth: MAX_JSON_DEPTH,
    parse: () => parseJsonText(lines.text(line), `the source on line [${line + 1}]`),
  };
}

/**
 * Splits and parses an NDJSON bulk body (see the module comment); a source line longer than
 * `maxDocumentBytes` fails its item.
 */
export function parseBulkBody(body: unknown, maxDocumentBytes = Infinity): ParsedBulkEntry[] {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (!Buffer.isBuffer(bytes) || blankBytes(bytes, 0, bytes.length)) {
    throw new ApiError('malformed_bulk', 'The bulk request must be terminated by a newline [\\n] and contain at least one action');
  }
  const lines = new BodyLines(bytes);
  const entries: ParsedBulkEntry[] = [];
  for (let index = 0; index < lines.count; index++) {
    if (lines.blank(index)) continue;
    const lineNumber = index + 1;
    const { action, metadata } = parseActionLine(lines.text(index), lineNumber);
    const collection = optionalString(metadata, '_index', lineNumber);
    const id = optionalIdString(metadata, lineNumber);
    const item: BulkItem = {
      action: metadata.op_type === 'create' && action === 'index' ? 'create' : action,
      collection,
      id,
      routing: optionalString(metadata, 'routing', lineNumber) ?? optionalString(metadata, '_routing', lineNumber),
      ifSeqNo: optionalInteger(metadata, 'if_seq_no', lineNumber),
      ifPrimaryTerm: optionalInteger(metadata, 'if_primary_term', lineNumber),
      retryOnConflict: optionalInteger(metadata, 'retry_on_conflict', lineNumber),
    };
    const version = optionalInteger(metadata, 'version', lineNumber);
    if (version !== undefined) item.version = version;
    const versionType = optionalString(metadata, 'version_type', lineNumber);
    if (versionType !== undefined) {
      if (versionType !== 'internal' && versionType !== 'external' && versionType !== 'external_gte') {
        throw new ApiError('malformed_bulk', `Action/metadata line [${lineNumber}]: [version_type] must be internal, external or external_gte`);
      }
      item.versionType = versionType;
    }
    if (metadata._source !== undefined) item.source = { source: metadata._source };
    if (metadata.require_alias !== undefined && metadata.require_alias !== null) {
      if (typeof metadata.require_alias !== 'boolean') throw new ApiError('malformed_bulk', `Action/metadata line [${lineNumber}]: [require_alias] must be a boolean`);
      item.requireAlias = metadata.require_alias;
    }
    if (action === 'delete') {
      entries.push({ kind: 'item', item });
      continue;
    }
    let sourceIndex = index + 1;
    while (sourceIndex < lines.count && lines.blank(sourceIndex)) sourceIndex++;
    if (sourceIndex >= lines.count) {
      throw new ApiError('malformed_bulk', `The bulk request's action on line [${lineNumber}] has no source line after it`);
    }
    index = sourceIndex;
    const oversized = oversizedDocument(lines.byteLength(sourceIndex), maxDocumentBytes);
    if (oversized) {
      entries.push({ kind: 'failed', action: item.action, index: collection ?? null, id: id ?? null, error: oversized });
      continue;
    }
    if (action !== 'update') {
      item.text = documentText(lines, sourceIndex);
      entries.push({ kind: 'item', item });
      continue;
    }
    try {
      item.body = parseJsonText(lines.text(sourceIndex), `the source on line [${sourceIndex + 1}]`);
      entries.push({ kind: 'item', item });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      entries.push({ kind: 'failed', action: item.action, index: collection ?? null, id: id ?? null, error });
    }
  }
  if (entries.length === 0) throw new ApiError('malformed_bulk', 'The bulk request contains no actions');
  return entries;
}

function parseActionLine(line: string, lineNumber: number): { action: BulkAction; metadata: Record<string, unknown> } {
  let parsed: unknown;
  try {
    parsed = parseJsonText(line, `the action on line [${lineNumber}]`);
  } catch (error) {
    throw new ApiError('malformed_bulk', `Malformed action/metadata line [${lineNumber}]: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ApiError('malformed_bulk', `Malformed action/metadata line [${lineNumber}], expected an object`);
  }
  const keys = Object.keys(parsed);
  if (keys.length === 0) throw new ApiError('malformed_bulk', `Malformed action/metadata line [${lineNumber}], expected FIELD_NAME but found [END_OBJECT]`);
  if (keys.length !== 1 || !ACTIONS.has(keys[0]!)) {
    throw new ApiError(
      'malformed_bulk',
      `Malformed action/metadata line [${lineNumber}], expected exactly one of [create], [delete], [index] or [update] but found [${keys.join(', ')}]`,
    );
  }
  const metadata = (parsed as Record<string, unknown>)[keys[0]!];
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new ApiError('malformed_bulk', `Malformed action/metadata line [${lineNumber}], the [${keys[0]}] metadata must be an object`);
  }
  for (const key of Object.keys(metadata)) {
    if (!METADATA_KEYS.has(key)) {
      throw new ApiError('malformed_bulk', `Action/metadata line [${lineNumber}] contains an unknown parameter [${key}]`);
    }
  }
  return { action: keys[0] as BulkAction, metadata: metadata as Record<string, unknown> };
}

function optionalString(metadata: Record<string, unknown>, key: string, lineNumber: number): string | undefined {
  const value = metadata[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new ApiError('malformed_bulk', `Action/metadata line [${lineNumber}]: [${key}] must be a non-empty string`);
  }
  return value;
}

function optionalIdString(metadata: Record<string, unknown>, lineNumber: number): string | undefined {
  const value = metadata._id;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  // An empty `_id` fails its item only (the node's id check), as in OpenSearch.
  if (value === '') return value;
  return optionalString(metadata, '_id', lineNumber);
}

function optionalInteger(metadata: Record<string, unknown>, key: string, lineNumber: number): number | undefined {
  const value = metadata[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ApiError('malformed_bulk', `Action/metadata line [${lineNumber}]: [${key}] must be a non-negative integer`);
  }
  return value;
}
