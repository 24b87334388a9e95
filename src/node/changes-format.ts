/**
 * How a change feed is written on the wire, as CouchDB writes it so its clients read it
 * unchanged. A result is
 * `{seq, id, op, version, changes:[{rev}], deleted?, doc?}`; `normal` and `longpoll` wrap the
 * results in `{"results":[ ... ], "last_seq", "pending"}` with one result per line, `continuous`
 * writes one result per line (NDJSON) and a final `{"last_seq", "pending"}` line, and
 * `eventsource` writes Server-Sent Events.
 */
import type { ChangeEntry, StoredDocument } from '../engine/shard/operations.ts';
import { spliceSource } from '../engine/update/source-splice.ts';
import { compactJson } from './json-layout.ts';

/** The feed styles of `_changes?feed=`. */
export type FeedMode = 'normal' | 'longpoll' | 'continuous' | 'eventsource';

/** The text pieces of one feed style. */
export interface FeedFraming {
  contentType: string;
  /** Written before the first result. */
  open: string;
  /** One result; `index` counts results from 0; `seq` is null between `seq_interval` rows. */
  row(json: string, seq: string | null, index: number): string;
  /** Keeps an idle connection alive. */
  heartbeat: string;
  /** Written after the last result (`count` results were written). */
  close(lastSeq: string, pending: number, count: number): string;
  /** A failure after the response started, or null when the style cannot express one. */
  error(type: string, reason: string): string | null;
}

const RESULTS_FRAMING: FeedFraming = {
  contentType: 'application/json; charset=utf-8',
  open: '{"results":[\n',
  row: (json, _seq, index) => (index === 0 ? json : `,\n${json}`),
  heartbeat: '\n',
  close: (lastSeq, pending, count) => `${count > 0 ? '\n' : ''}],\n"last_seq":${JSON.stringify(lastSeq)},"pending":${pending}}\n`,
  error: () => null,
};

/** Framing of every feed style. */
export const FRAMINGS: Readonly<Record<FeedMode, FeedFraming>> = {
  normal: RESULTS_FRAMING,
  longpoll: RESULTS_FRAMING,
  continuous: {
    contentType: 'application/x-ndjson; charset=utf-8',
    open: '',
    row: (json) => `${json}\n`,
    heartbeat: '\n',
    close: (lastSeq, pending) => `{"last_seq":${JSON.stringify(lastSeq)},"pending":${pending}}\n`,
    error: (type, reason) => `${JSON.stringify({ error: type, reason })}\n`,
  },
  eventsource: {
    contentType: 'text/event-stream; charset=utf-8',
    open: '',
    row: (json, seq) => `data: ${json}\n${seq === null ? '' : `id: ${seq}\n`}\n`,
    heartbeat: 'event: heartbeat\ndata: \n\n',
    close: (lastSeq) => `event: last_seq\ndata: ${JSON.stringify({ last_seq: lastSeq })}\nid: ${lastSeq}\n\n`,
    error: (type, reason) => `event: error\ndata: ${JSON.stringify({ error: type, reason })}\n\n`,
  },
};

/** The revision token of a document version written at a shard seq: `<version>-<seq, 16 hex digits>`. */
export function revisionOf(version: number, seq: number): string {
  return `${version}-${seq.toString(16).padStart(16, '0')}`;
}

/**
 * The `doc` of a result with `include_docs`, as JSON text: the document as it is now (as CouchDB
 * does, not as it was at that change) with `_id` and `_rev` first; `{_id, _rev, _deleted: true}`
 * once it is gone.
 */
export function currentDocJson(change: ChangeEntry, stored: StoredDocument | null): string {
  if (stored === null) return `{"_id":${JSON.stringify(change.id)},"_rev":"${revisionOf(change.version, change.seq)}","_deleted":true}`;
  const head = `{"_id":${JSON.stringify(stored.id)},"_rev":"${revisionOf(stored.version, stored.seqNo)}"`;
  const body = documentBody(stored);
  return body === '{}' ? `${head}}` : `${head},${body.slice(1)}`;
}

/** The document's source on one line without `_id` and `_rev`: its stored text (literals as sent) when the shard sent it. */
function documentBody(stored: StoredDocument): string {
  const { source, sourceText } = stored;
  const shadowed = Object.hasOwn(source, '_id') || Object.hasOwn(source, '_rev');
  if (sourceText !== undefined) {
    const text = shadowed ? spliceSource(Buffer.from(sourceText), new Map([['_id', null], ['_rev', null]])).toString('utf8') : sourceText;
    return compactJson(text);
  }
  if (!shadowed) return JSON.stringify(source);
  const copy = { ...source };
  delete copy._id;
  delete copy._rev;
  return JSON.stringify(copy);
}

/** One result as JSON text, fields in the documented order. */
export function renderResult(change: ChangeEntry, seq: string | null, docJson?: string): string {
  const rev = revisionOf(change.version, change.seq);
  let json =
    `{"seq":${seq === null ? 'null' : JSON.stringify(seq)},"id":${JSON.stringify(change.id)},"op":"${change.op}",` +
    `"version":${change.version},"changes":[{"rev":"${rev}"}]`;
  if (change.op === 'delete') json += ',"deleted":true';
  if (docJson !== undefined) json += `,"doc":${docJson}`;
  return `${json}}`;
}
