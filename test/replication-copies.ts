/**
 * Offline reading of shard copies for the replication fault-injection suite: once every node has
 * stopped, each copy directory (`<node data dir>/shards/<shard uuid>/`) is opened with the engine
 * itself (`Shard.open` for live documents, the write-ahead log for records), and the copies of one
 * shard are compared: the same live documents, versions and sources, and the same record at every
 * seq both logs hold ("no two contents for one seq"); each acknowledged write is in every copy's
 * log at its seq, unless that copy's log starts after it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Mapping } from '../src/engine/mapping/mapping.ts';
import { Shard } from '../src/engine/shard/shard.ts';
import { decodeRecord } from '../src/engine/shard/wal-records.ts';
import { WriteAheadLog } from '../src/engine/wal/wal.ts';
import { canonical, type DocState, type WriteRecord } from './replication-checker.ts';

/** One record of a copy's log, decoded: kind, document, version, term, and the source or inplace writes. */
export interface CopyRecord {
  type: 'index' | 'update' | 'delete' | 'inplace';
  id: string;
  version: number;
  primaryTerm: number;
  /** Canonical JSON of the whole source (index records), of a field update's changed top-level fields (their JSON texts; null: removed), or of the inplace writes. */
  body: string;
}

/** What one shard copy holds on disk. */
export interface CopyContents {
  /** Which node's data directory it was read from (the node's name). */
  node: string;
  shard: number;
  /** The state of every id asked for (null: no live document). */
  documents: Map<string, DocState>;
  /** Live documents the copy counts, to catch documents with ids nobody wrote. */
  liveCount: number;
  /** Records by seq; `firstSeq` is the lowest the log retains. */
  records: Map<number, CopyRecord>;
  firstSeq: number;
}

const READ_BATCH = 4096;

async function readLog(dir: string): Promise<{ records: Map<number, CopyRecord>; firstSeq: number }> {
  const wal = await WriteAheadLog.open({ dir: join(dir, 'wal') });
  try {
    const records = new Map<number, CopyRecord>();
    let next = wal.firstSeq;
    for (;;) {
      const batch = wal.readRange(next, READ_BATCH);
      if (batch.length === 0) break;
      for (const record of batch) {
        const decoded = decodeRecord(record.payload);
        const base = { id: decoded.id, version: decoded.version, primaryTerm: decoded.primaryTerm };
        if (decoded.type === 'index') records.set(record.seq, { type: decoded.change, ...base, body: canonical(JSON.parse(decoded.source.toString('utf8'))) });
        else if (decoded.type === 'inplace') records.set(record.seq, { type: 'inplace', ...base, body: canonical(decoded.writes) });
        else if (decoded.type === 'fields') records.set(record.seq, { type: 'update', ...base, body: canonical(Object.fromEntries(decoded.fields)) });
        else records.set(record.seq, { type: 'delete', ...base, body: '' });
      }
      next = batch[batch.length - 1]!.seq + 1;
    }
    return { records, firstSeq: wal.firstSeq };
  } finally {
    await wal.close();
  }
}

/** Reads one stopped copy: its log, then its live documents among `ids`, through the engine. */
export async function readCopy(options: { dataDir: string; node: string; shard: number; uuid: string; mapping: Mapping; ids: readonly string[] }): Promise<CopyContents | null> {
  const dir = join(options.dataDir, 'shards', options.uuid);
  if (!existsSync(dir)) return null;
  const { records, firstSeq } = await readLog(dir);
  const shard = await Shard.open({ dir, uuid: options.uuid, mapping: options.mapping, settings: { mergeEnabled: false } });
  try {
    const documents = new Map<string, DocState>();
    for (const id of options.ids) {
      const stored = shard.get(id);
      documents.set(id, stored === null ? null : { version: stored.version, source: stored.source as Record<string, unknown> });
    }
    return { node: options.node, shard: options.shard, documents, liveCount: shard.stats().docs, records, firstSeq };
  } finally {
    await shard.close();
  }
}

function describeRecord(record: CopyRecord | undefined): string {
  return record === undefined ? 'nothing' : `${record.type} ${record.id} v${record.version} t${record.primaryTerm} ${record.body}`;
}

/** Compares the copies of one shard with each other and with the acknowledged writes routed to it. */
export function compareCopies(copies: readonly CopyContents[], writes: readonly WriteRecord[]): string[] {
  const violations: string[] = [];
  for (const copy of copies) {
    const live = [...copy.documents.values()].filter((state) => state !== null).length;
    if (live !== copy.liveCount) violations.push(`copy of shard ${copy.shard} on ${copy.node}: ${copy.liveCount} live documents, ${live} of them written by the suite`);
  }
  const [first, ...others] = copies;
  for (const other of others) {
    const where = `shard ${other.shard}, ${first!.node} vs ${other.node}`;
    for (const [id, state] of first!.documents) {
      const theirs = other.documents.get(id) ?? null;
      if (canonical(state) !== canonical(theirs)) violations.push(`${where}: ${id} is ${canonical(state)} vs ${canonical(theirs)}`);
    }
    for (const [seq, record] of first!.records) {
      const theirs = other.records.get(seq);
      if (theirs !== undefined && describeRecord(theirs) !== describeRecord(record)) violations.push(`${where}: seq ${seq} holds ${describeRecord(record)} vs ${describeRecord(theirs)}`);
    }
  }
  for (const write of writes) {
    if (write.outcome !== 'ok' || write.ack!.result === 'noop') continue;
    for (const copy of copies) {
      if (write.shard !== copy.shard || write.ack!.seq < copy.firstSeq) continue;
      const record = copy.records.get(write.ack!.seq);
      const where = `copy of shard ${copy.shard} on ${copy.node}: acknowledged ${write.opId} (${write.docId} v${write.ack!.version} seq ${write.ack!.seq})`;
      if (record === undefined) {
        violations.push(`${where} is not in its log`);
        continue;
      }
      const kindMatches =
        write.request.kind === 'delete' ? record.type === 'delete' : write.request.kind === 'index' ? record.type === 'index' : record.type === 'update' || record.type === 'inplace';
      const sourceMatches = write.request.kind !== 'index' || record.body === canonical(write.request.source);
      if (record.id !== write.docId || record.version !== write.ack!.version || record.primaryTerm !== write.ack!.primaryTerm || !kindMatches || !sourceMatches) {
        violations.push(`${where} is logged as ${describeRecord(record)}`);
      }
    }
  }
  return violations;
}
