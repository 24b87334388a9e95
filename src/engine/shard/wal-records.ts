import { EngineError } from '../errors.ts';
import { readTopLevelTexts, topLevelLayout } from '../update/source-splice.ts';
import type { ChangeEntry } from './operations.ts';

/**
 * Payloads of the shard's WAL records. Each record sets state (never "add N"), so replaying a
 * record whose effect is already persisted is harmless. Layout: one line of JSON header, `\n`,
 * then (for `index`) the document source bytes. See docs/formats/shard.md.
 */
export type ShardRecord =
  | { type: 'index'; id: string; version: number; primaryTerm: number; change: 'index' | 'update'; source: Buffer }
  | { type: 'delete'; id: string; version: number; primaryTerm: number }
  | { type: 'inplace'; id: string; version: number; primaryTerm: number; writes: Record<string, number | null> }
  /**
   * A field-level update: the new JSON text of each top-level field the update read (null: the
   * field is gone). Applied as a per-field overlay on the document where it lives (field-overlay.ts).
   */
  | { type: 'fields'; id: string; version: number; primaryTerm: number; fields: Map<string, string | null> };

interface RecordHeader {
  t: 'i' | 'u' | 'd' | 'p' | 'f';
  id: string;
  v: number;
  pt: number;
  w?: Record<string, number | null>;
  /** `f` records: the top-level fields removed. */
  r?: string[];
}

const NEWLINE = 0x0a;

/** Encodes a shard record as a WAL payload. */
export function encodeRecord(record: ShardRecord): Buffer {
  const header: RecordHeader = { t: 'd', id: record.id, v: record.version, pt: record.primaryTerm };
  if (record.type === 'index') {
    header.t = record.change === 'update' ? 'u' : 'i';
    const head = Buffer.from(JSON.stringify(header) + '\n');
    return Buffer.concat([head, record.source], head.length + record.source.length);
  }
  if (record.type === 'fields') {
    header.t = 'f';
    header.r = [...record.fields].filter(([, text]) => text === null).map(([key]) => key);
    const members = [...record.fields].filter(([, text]) => text !== null).map(([key, text]) => `${JSON.stringify(key)}:${text}`);
    return Buffer.from(`${JSON.stringify(header)}\n{${members.join(',')}}`);
  }
  if (record.type === 'inplace') {
    header.t = 'p';
    header.w = record.writes;
  }
  return Buffer.from(JSON.stringify(header) + '\n');
}

/** Decodes a WAL payload written by encodeRecord. */
export function decodeRecord(payload: Buffer): ShardRecord {
  const split = payload.indexOf(NEWLINE);
  if (split < 0) throw new EngineError('corrupt_index', 'WAL record without header terminator');
  const header = JSON.parse(payload.subarray(0, split).toString('utf8')) as RecordHeader;
  const base = { id: header.id, version: header.v, primaryTerm: header.pt };
  switch (header.t) {
    case 'i':
    case 'u':
      return { type: 'index', ...base, change: header.t === 'u' ? 'update' : 'index', source: payload.subarray(split + 1) };
    case 'd':
      return { type: 'delete', ...base };
    case 'p':
      return { type: 'inplace', ...base, writes: header.w ?? {} };
    case 'f': {
      const body = payload.subarray(split + 1);
      const layout = topLevelLayout(body);
      const fields = new Map<string, string | null>(readTopLevelTexts(body, layout.entries.map((entry) => entry.key), layout));
      for (const key of header.r ?? []) fields.set(key, null);
      return { type: 'fields', ...base, fields };
    }
    default:
      throw new EngineError('corrupt_index', `unknown WAL record type [${String(header.t)}]`);
  }
}

/** The change-feed view of a record. */
export function changeOf(seq: number, timestamp: number, record: ShardRecord): ChangeEntry {
  const op = record.type === 'delete' ? 'delete' : record.type === 'index' ? record.change : 'update';
  return { seq, timestamp, op, id: record.id, version: record.version };
}
