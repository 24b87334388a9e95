import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { verifyLiveShard, type LiveShardCheck } from '../directory/live-shard-verify.ts';
import { EngineError } from '../errors.ts';
import { setKey } from '../mapping/json-value.ts';
import { flattenMapping, type FlatField, type Mapping } from '../mapping/mapping.ts';
import { parseDocument, type ParseOptions, type ParsedDocument } from '../mapping/parse-document.ts';
import { MutableSegment } from '../mutable/mutable-segment.ts';
import { SegmentReader } from '../segment/segment-reader.ts';
import { writePath } from '../update/paths.ts';
import { planUpdate } from '../update/plan-update.ts';
import { WriteAheadLog, type NumberedRecord, type WalRecord } from '../wal/wal.ts';
import { FileHolds, type HeldFiles } from './file-holds.ts';
import { readHistory, recordTermAt, type HistoryPosition } from './history.ts';
import { LeafSet, type DocLocation } from './leaf-set.ts';
import { Maintenance, type MergeReport, type ShardFaults } from './maintenance.ts';
import { MANIFEST_FORMAT_VERSION, readManifest, type Manifest } from './manifest.ts';
import type { ChangeEntry, DeleteOp, IndexOp, StoredDocument, UpdateOp, WriteOp, WriteResult } from './operations.ts';
import { RefreshedViews } from './refreshed-view.ts';
import { Searcher } from './searcher.ts';
import { DEFAULT_ENGINE_SETTINGS, DEFAULT_REFRESH_INTERVAL_MS, type EngineSettings } from './settings.ts';
import { readSource, readSourceAndText } from './source-overlay.ts';
import { changeOf, decodeRecord, encodeRecord, type ShardRecord } from './wal-records.ts';
import { documentSeqNo } from './seq-no.ts';
import { readTopLevelTexts, spliceSource, topLevelLayout } from '../update/source-splice.ts';
import { copiesAcrossKeys, FieldPlanUnavailable, ignoresMalformedUnder, fieldReplacements, parseTexts, partialState, readFieldTexts, updateKeys } from './field-update.ts';

export { DEFAULT_ENGINE_SETTINGS, type EngineSettings };

/** Options to open a shard. */
export interface ShardOptions {
  /** Directory of this shard copy (created if missing). */
  dir: string;
  /** The shard's UUID, fixed for life. */
  uuid: string;
  /** The collection's current mapping. */
  mapping: Mapping;
  settings?: Partial<EngineSettings>;
  primaryTerm?: number;
  logger?: Logger;
  /** Fault-injection points, for crash tests. */
  faults?: ShardFaults;
}

/** Times the epoch size a mutable layer may reach, while no epoch has frozen it, before client writes are held. */
const WRITE_HOLD_FACTOR = 4;

/** Per-segment figures for `_cat/segments` and stats. */
export interface SegmentStats {
  name: string;
  docs: number;
  deletedDocs: number;
  bytes: number;
}

/** Counters of one shard. */
export interface ShardStats {
  docs: number;
  deletedDocs: number;
  segments: SegmentStats[];
  mutableDocs: number;
  walBytes: number;
  seqNo: number;
  checkpointSeq: number;
  epochs: number;
  merges: number;
  lastEpochAt: number | null;
  /** Epochs and merges queued or running. */
  pendingMaintenance: number;
  bytes: number;
  /** Client writes held now because indexing outruns epochs, and the total time writes were held (ms). */
  heldWrites: number;
  heldMs: number;
}

/** What one write did, before its WAL record is durable. */
interface AppliedWrite {
  result: WriteResult;
  durable: Promise<void> | null;
}

/**
 * One shard copy: WAL, mutable layer, segments and their maintenance. All writes run their
 * checks, WAL append and in-memory apply synchronously in one turn, so they are serialised
 * without locks; a write resolves once its WAL record is fsynced.
 */
export class Shard {
  private fieldMap: Map<string, FlatField>;
  private inplace: FlatField[];
  /** Paths of `inplace`, whose slots a snapshot saves before a write changes them. */
  private inplacePaths: string[];
  private settings: EngineSettings;
  private closed = false;
  private epochTimer: NodeJS.Timeout | null = null;
  /** Client writes held now by `writeHold`, and the time they spent held. */
  private heldWrites = 0;
  private heldMs = 0;
  /** Primary term of the record at the WAL's last seq (null when it is not retained). */
  private lastTerm: number | null;
  private readonly holds: FileHolds;
  /** Test-only fault points (crash tests). */
  private faults: ShardFaults | undefined;
  /** The refreshed view searches read when the collection makes writes visible on refresh (refreshed-view.ts). */
  private readonly views: RefreshedViews;

  private constructor(
    readonly uuid: string,
    readonly dir: string,
    private readonly wal: WriteAheadLog,
    private readonly leaves: LeafSet,
    private readonly maintenance: Maintenance,
    mapping: Mapping,
    settings: EngineSettings,
    private primaryTerm: number,
    private readonly logger: Logger | undefined,
  ) {
    this.fieldMap = flattenMapping(mapping);
    this.inplace = [...this.fieldMap.values()].filter((field) => field.inplace);
    this.inplacePaths = this.inplace.map((field) => field.path);
    this.settings = settings;
    this.lastTerm = recordTermAt(wal, wal.lastSeq);
    this.holds = new FileHolds(dir, wal, maintenance);
    this.views = new RefreshedViews({
      open: () => this.leaves.openSnapshot(),
      lastSeq: () => this.wal.lastSeq,
      leaves: () => (this.leaves.frozen ? [...this.leaves.segments, this.leaves.frozen, this.leaves.mutable] : [...this.leaves.segments, this.leaves.mutable]),
    });
  }

  /** Opens (or creates) a shard and replays its WAL past the manifest checkpoint. */
  static async open(options: ShardOptions): Promise<Shard> {
    const settings = { ...DEFAULT_ENGINE_SETTINGS, ...options.settings };
    await fs.mkdir(path.join(options.dir, 'segments'), { recursive: true });
    const manifest: Manifest = (await readManifest(options.dir)) ?? {
      formatVersion: MANIFEST_FORMAT_VERSION,
      shardUuid: options.uuid,
      checkpointSeq: 0,
      nextSegmentNumber: 1,
      segments: [],
      epochs: 0,
      merges: 0,
      lastEpochAt: null,
    };
    const fields = flattenMapping(options.mapping);
    const inplaceNames = [...fields.values()].filter((field) => field.inplace).map((field) => field.path);
    const segmentsDir = path.join(options.dir, 'segments');
    let maintenance: Maintenance | null = null;
    const leaves = new LeafSet(new MutableSegment(0, inplaceNames), (segment, removeFiles) => {
      segment.close();
      if (removeFiles) maintenance?.removeSegmentFiles(segment.name);
    });
    for (const entry of manifest.segments) {
      const reader = SegmentReader.open(path.join(segmentsDir, entry.meta.name), entry.meta, entry, fields);
      await reader.removeStaleGenerations(entry);
      leaves.segments.push(reader);
    }
    await removeOrphans(segmentsDir, new Set(manifest.segments.map((entry) => entry.meta.name)));
    const wal = await WriteAheadLog.open({ dir: path.join(options.dir, 'wal'), segmentBytes: settings.walSegmentBytes, checkpoint: manifest.wal });
    maintenance = new Maintenance(options.dir, wal, leaves, manifest, settings, options.faults ?? {}, options.logger);
    const shard = new Shard(options.uuid, options.dir, wal, leaves, maintenance, options.mapping, settings, options.primaryTerm ?? 1, options.logger);
    shard.faults = options.faults;
    maintenance.bind(() => shard.fieldMap, () => shard.inplace.map((field) => field.path));
    await shard.replay(manifest.checkpointSeq + 1);
    shard.startEpochTimer();
    shard.configureViews();
    return shard;
  }

  private async replay(fromSeq: number): Promise<void> {
    let count = 0;
    for (const record of this.wal.readRange(fromSeq, Number.MAX_SAFE_INTEGER)) {
      this.applyRecord(record.seq, decodeRecord(record.payload));
      count++;
    }
    if (count > 0) this.logger?.info({ shard: this.uuid, records: count }, 'replayed WAL');
  }

  /**
   * Applies one decoded record to memory (used by writes and by recovery). A write passes the
   * location it already looked up in the same turn; recovery lets it be found here.
   */
  private applyRecord(
    seq: number,
    record: ShardRecord,
    parsed?: ParsedDocument,
    location: DocLocation | null = this.leaves.locate(record.id),
  ): void {
    // Open snapshots save what this record changes; index and delete only delete the old doc.
    if (location) this.leaves.preserve(location, this.inplacePaths, record.type !== 'index' && record.type !== 'delete');
    if (record.type === 'fields') {
      if (!location) return;
      location.leaf.applyFields(location.doc, record.fields, this.fieldMap, false);
      location.leaf.setMeta(location.doc, seq, record.version, record.primaryTerm);
      return;
    }
    if (record.type === 'inplace') {
      if (!location) return;
      for (const [field, value] of Object.entries(record.writes)) {
        location.leaf.inplaceColumn(field)?.set(location.doc, value ?? NaN);
      }
      location.leaf.setMeta(location.doc, seq, record.version, record.primaryTerm);
      return;
    }
    if (location) location.leaf.deleteDoc(location.doc);
    if (record.type === 'delete') return;
    const document = parsed ?? this.parseStored(record.source);
    this.leaves.mutable.add(
      { id: record.id, seqNo: seq, version: record.version, primaryTerm: record.primaryTerm, source: record.source, parsed: document },
      this.fieldMap,
    );
  }

  /** Parses a document as the WAL stores it (its JSON text, whose long digits are kept exactly). */
  private parseStored(bytes: Buffer): ParsedDocument {
    const text = bytes.toString('utf8');
    return this.parse(JSON.parse(text) as Record<string, unknown>, { sourceText: text });
  }

  private parse(source: Record<string, unknown>, options: ParseOptions = {}): ParsedDocument {
    const parsed = parseDocument(source, this.fieldMap, options);
    for (const field of this.inplace) {
      const values = parsed.numeric.get(field.path);
      if (values && values.length > 1) {
        throw new EngineError('mapper_parsing', `field [${field.path}] is inplace and takes a single value, got an array of ${values.length}`);
      }
    }
    return parsed;
  }

  /** Index, delete or update one document; resolves after the WAL fsync. */
  async write(op: WriteOp): Promise<WriteResult> {
    const hold = this.writeHold();
    if (hold) await hold;
    const applied = this.applyWrite(op);
    if (applied.durable) await applied.durable;
    this.maybeEpoch();
    return applied.result;
  }

  /** Applies a batch in order with one group commit; failed items are returned as errors. */
  async writeBatch(ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>> {
    const hold = this.writeHold();
    if (hold) await hold;
    const results: Array<WriteResult | EngineError> = [];
    let durable: Promise<void> | null = null;
    for (const op of ops) {
      try {
        const applied = this.applyWrite(op);
        if (applied.durable) durable = applied.durable;
        results.push(applied.result);
      } catch (error) {
        if (!(error instanceof EngineError)) throw error;
        results.push(error);
      }
    }
    // WAL groups are flushed in order, so the last record's fsync covers the earlier ones.
    if (durable) await durable;
    this.maybeEpoch();
    return results;
  }

  private applyWrite(op: WriteOp): AppliedWrite {
    if (this.closed) throw new EngineError('shard_closed', `shard [${this.uuid}] is closed`);
    const location = this.leaves.locate(op.id);
    checkConcurrency(op, location);
    switch (op.kind) {
      case 'index': {
        if (op.opType === 'create' && location) {
          const version = location.leaf.meta(location.doc).version;
          throw new EngineError('version_conflict', `[${op.id}]: version conflict, document already exists (current version [${version}])`);
        }
        const sourceText = op.sourceText ?? (op.sourceJson === undefined ? undefined : Buffer.from(op.sourceJson));
        return this.indexDocument(op.id, op.source, location, 'index', false, sourceText, externalVersionOf(op, location));
      }
      case 'delete': {
        const external = externalVersionOf(op, location);
        if (!location) {
          return { result: { id: op.id, result: 'not_found', seqNo: this.wal.lastSeq, version: external ?? 1, primaryTerm: this.primaryTerm }, durable: null };
        }
        const version = external ?? location.leaf.meta(location.doc).version + 1;
        const record: ShardRecord = { type: 'delete', id: op.id, version, primaryTerm: this.primaryTerm };
        const { seq, durable } = this.append(record);
        this.applyRecord(seq, record, undefined, location);
        return { result: { id: op.id, result: 'deleted', seqNo: seq, version, primaryTerm: this.primaryTerm }, durable };
      }
      case 'update':
        return this.update(op, location);
    }
  }

  private update(op: UpdateOp, location: DocLocation | null): AppliedWrite {
    if (!location) {
      if (op.upsert) return this.indexDocument(op.id, op.upsert, null, 'index', true);
      if (op.docAsUpsert && op.doc) {
        const plan = planUpdate({}, { doc: op.doc, ops: op.ops }, this.fieldMap);
        return this.indexDocument(op.id, plan.source, null, 'index', true);
      }
      throw new EngineError('document_missing', `[${op.id}]: document missing`);
    }
    const meta = location.leaf.meta(location.doc);
    const columnsOnly = this.columnOnlyState(op, location);
    const fieldState = columnsOnly ? null : this.fieldState(op, location);
    const current = columnsOnly ?? fieldState?.state ?? readSource(location.leaf, location.doc, this.inplace);
    const plan = planUpdate(current, { doc: op.doc, ops: op.ops }, this.fieldMap);
    const resultSource = (): { source?: Record<string, unknown>; sourceText?: string } => {
      if (!op.returnSource) return {};
      const { source, text } = readSourceAndText(location.leaf, location.doc, this.inplace);
      return { source, sourceText: text };
    };
    if (!plan.changed && op.detectNoop !== false) {
      return { result: { id: op.id, result: 'noop', seqNo: meta.seqNo, version: meta.version, primaryTerm: meta.primaryTerm, ...resultSource() }, durable: null };
    }
    const columnsPresent = plan.inplaceWrites.every((write) => location.leaf.inplaceColumn(write.field) !== null);
    if (plan.inplaceOnly && columnsPresent) {
      const writes: Record<string, number | null> = {};
      for (const write of plan.inplaceWrites) writes[write.field] = write.value;
      const version = meta.version + 1;
      const record: ShardRecord = { type: 'inplace', id: op.id, version, primaryTerm: this.primaryTerm, writes };
      const { seq, durable } = this.append(record);
      this.applyRecord(seq, record, undefined, location);
      return { result: { id: op.id, result: 'updated', seqNo: seq, version, primaryTerm: this.primaryTerm, ...resultSource(), inplace: true }, durable };
    }
    if (fieldState) return this.updateFields(op, location, fieldState.state, fieldState.texts, plan.source, meta.version + 1);
    // A column-only plan that turned out to need the whole document is redone on the source.
    const whole = columnsOnly ? readSource(location.leaf, location.doc, this.inplace) : current;
    const fullPlan = columnsOnly ? planUpdate(whole, { doc: op.doc, ops: op.ops }, this.fieldMap) : plan;
    // The stored text keeps byte for byte every top-level field whose stored value the update did
    // not change (one holding an inplace field whose column moved on is written anew).
    const stored = location.leaf.source(location.doc);
    const layout = topLevelLayout(stored);
    const texts = readTopLevelTexts(stored, layout.entries.map((entry) => entry.key), layout);
    const text = spliceSource(stored, fieldReplacements(parseTexts(texts), texts, fullPlan.source), layout);
    const applied = this.indexDocument(op.id, fullPlan.source, location, 'update', false, text);
    if (op.returnSource) {
      applied.result.source = fullPlan.source;
      applied.result.sourceText = text.toString('utf8');
    }
    return applied;
  }

  /**
   * The top-level fields an update names, as the document holds them now, for planning it per
   * field (field-update.ts); null when it must be planned on the whole document.
   */
  private fieldState(op: UpdateOp, location: DocLocation): { state: Record<string, unknown>; texts: Map<string, string> } | null {
    const keys = updateKeys(op);
    if (!keys || copiesAcrossKeys(keys, this.fieldMap) || ignoresMalformedUnder(keys, this.fieldMap)) return null;
    const texts = readFieldTexts(location, keys);
    try {
      return { state: partialState(location, texts, keys, this.inplace), texts };
    } catch (error) {
      if (error instanceof FieldPlanUnavailable) return null;
      throw error;
    }
  }

  /**
   * Writes an update as a field overlay: the changed top-level fields' new text goes to the WAL
   * (a `fields` record) and onto the document where it lives; no other field is read or indexed.
   */
  private updateFields(
    op: UpdateOp,
    location: DocLocation,
    before: Record<string, unknown>,
    texts: ReadonlyMap<string, string>,
    after: Record<string, unknown>,
    version: number,
  ): AppliedWrite {
    const fields = fieldReplacements(before, texts, after);
    const changed: Record<string, unknown> = {};
    for (const [key, text] of fields) if (text !== null) setKey(changed, key, JSON.parse(text));
    this.parse(changed, { strictNumbers: true });
    const record: ShardRecord = { type: 'fields', id: op.id, version, primaryTerm: this.primaryTerm, fields };
    const { seq, durable } = this.append(record);
    this.faults?.afterFieldsAppend?.();
    this.applyRecord(seq, record, undefined, location);
    const source = op.returnSource ? readSourceAndText(location.leaf, location.doc, this.inplace) : undefined;
    return { result: { id: op.id, result: 'updated', seqNo: seq, version, primaryTerm: this.primaryTerm, source: source?.source, sourceText: source?.text, fields: true }, durable };
  }

  /**
   * For an update made only of operators on inplace fields, the current values of just those
   * fields, read from their column slots (the O(1) path: the stored document is not read).
   * Null when the update needs the whole document.
   */
  private columnOnlyState(op: UpdateOp, location: DocLocation): Record<string, unknown> | null {
    if (op.doc !== undefined || !op.ops || op.ops.length === 0) return null;
    const state: Record<string, unknown> = {};
    for (const operation of op.ops) {
      const field = this.fieldMap.get(operation.field);
      if (operation.op === 'rename' || !field?.inplace) return null;
      const column = location.leaf.inplaceColumn(field.path);
      if (!column) return null;
      const value = column.get(location.doc);
      if (!Number.isNaN(value)) writePath(state, field.path, field.type === 'boolean' ? value !== 0 : value);
    }
    return state;
  }

  private indexDocument(
    id: string,
    source: Record<string, unknown>,
    location: DocLocation | null,
    change: 'index' | 'update',
    upserted = false,
    sourceText?: Uint8Array,
    externalVersion?: number,
  ): AppliedWrite {
    const parsed = this.parse(source, { strictNumbers: true, sourceText });
    const version = externalVersion ?? (location ? location.leaf.meta(location.doc).version + 1 : 1);
    const bytes = sourceText ? Buffer.from(sourceText.buffer, sourceText.byteOffset, sourceText.byteLength) : Buffer.from(JSON.stringify(source));
    const record: ShardRecord = { type: 'index', id, version, primaryTerm: this.primaryTerm, change, source: bytes };
    const { seq, durable } = this.append(record);
    this.applyRecord(seq, record, parsed, location);
    const result = location ? 'updated' : 'created';
    return {
      result: { id, result, seqNo: seq, version, primaryTerm: this.primaryTerm, ...(upserted ? { source } : {}) },
      durable,
    };
  }

  private append(record: ShardRecord): { seq: number; durable: Promise<void> } {
    const { firstSeq, durable } = this.wal.append([encodeRecord(record)]);
    this.lastTerm = record.primaryTerm;
    return { seq: firstSeq, durable };
  }

  /** Sets the primary term that records written from now on carry (terms never go down). */
  setPrimaryTerm(term: number): void {
    if (!Number.isSafeInteger(term) || term < this.primaryTerm) {
      throw new EngineError('illegal_argument', `primary term of shard [${this.uuid}] must be an integer of at least [${this.primaryTerm}], got [${term}]`);
    }
    this.primaryTerm = term;
  }

  /**
   * Replica side: appends the records above the WAL's last seq with the primary's seqs and
   * timestamps and applies them as replay does, in one turn; resolves once they are durable.
   * Records at or below the last seq are skipped (a resend); a hole is `replication_gap`, and a
   * record that does not decode or parse fails the call before anything is written.
   */
  async applyRecords(records: readonly NumberedRecord[]): Promise<HistoryPosition> {
    if (this.closed) throw new EngineError('shard_closed', `shard [${this.uuid}] is closed`);
    const fresh = records.filter((record) => record.seq > this.wal.lastSeq);
    const decoded = fresh.map((numbered) => {
      try {
        const record = decodeRecord(Buffer.from(numbered.payload.buffer, numbered.payload.byteOffset, numbered.payload.byteLength));
        const parsed = record.type === 'index' ? this.parseStored(record.source) : undefined;
        return { record, parsed };
      } catch (error) {
        if (error instanceof EngineError) throw error;
        throw new EngineError('corrupt_index', `replicated record [${numbered.seq}] does not decode: ${(error as Error).message}`);
      }
    });
    const durable = this.wal.appendNumbered(fresh);
    fresh.forEach((numbered, index) => this.applyRecord(numbered.seq, decoded[index]!.record, decoded[index]!.parsed));
    if (decoded.length > 0) this.lastTerm = decoded[decoded.length - 1]!.record.primaryTerm;
    await durable;
    this.maybeEpoch();
    return this.historyPosition();
  }

  /** Where this copy's history stands: first retained seq, last appended seq and its term. */
  historyPosition(): HistoryPosition {
    return { firstSeq: this.wal.firstSeq, lastSeq: this.wal.lastSeq, lastTerm: this.wal.lastSeq >= this.wal.firstSeq ? this.lastTerm : null };
  }

  /** Durable records after `afterSeq` for a replica, oldest first, bounded by `limit` and about `maxBytes` (see readHistory). */
  readRecords(afterSeq: number, limit: number, maxBytes: number): WalRecord[] {
    return readHistory(this.wal, afterSeq, limit, maxBytes);
  }

  /** Primary term of the retained durable record at `seq`, or null. */
  termAt(seq: number): number | null {
    return recordTermAt(this.wal, seq);
  }

  /** Holds this copy's files for a file copy until `releaseFiles` or `HOLD_TIMEOUT_MS` (file-holds.ts). */
  holdFiles(): Promise<HeldFiles> {
    if (this.closed) return Promise.reject(new EngineError('shard_closed', `shard [${this.uuid}] is closed`));
    return this.holds.hold();
  }

  /** Ends a file hold (an unknown one is ignored). */
  releaseFiles(hold: number): void {
    this.holds.release(hold);
  }

  /** Whether a live document with this id exists (no document is read). */
  exists(id: string): boolean {
    return this.leaves.locate(id) !== null;
  }

  /** The live document with this id (inplace values overlaid), or null. */
  get(id: string): StoredDocument | null {
    const location = this.leaves.locate(id);
    if (!location) return null;
    const meta = location.leaf.meta(location.doc);
    const { source, text } = readSourceAndText(location.leaf, location.doc, this.inplace);
    return { id, source, sourceText: text, seqNo: meta.seqNo, version: meta.version, primaryTerm: meta.primaryTerm };
  }

  /**
   * The document with this id as searches see it: from the refreshed view in refresh mode (a get
   * with `realtime=false`), else as `get`.
   */
  getVisible(id: string): StoredDocument | null {
    if (!this.views.active) return this.get(id);
    const lease = this.views.acquire();
    try {
      for (let index = lease.leaves.length - 1; index >= 0; index--) {
        const leaf = lease.leaves[index]!;
        const doc = leaf.lookupId(id);
        if (doc < 0) continue;
        const meta = leaf.meta(doc);
        const { source, text } = readSourceAndText(leaf, doc, this.inplace);
        return { id, source, sourceText: text, seqNo: meta.seqNo, version: meta.version, primaryTerm: meta.primaryTerm };
      }
      return null;
    } finally {
      lease.release();
    }
  }

  /** Whether a document with this id is in the view searches read (see `getVisible`). */
  existsVisible(id: string): boolean {
    if (!this.views.active) return this.exists(id);
    const lease = this.views.acquire();
    try {
      return lease.leaves.some((leaf) => leaf.lookupId(id) >= 0);
    } finally {
      lease.release();
    }
  }

  /**
   * The stored JSON text of a live document (field overlays spliced in, inplace column values not:
   * `get` shows those), byte for byte as written for the fields no update changed; null when absent.
   */
  sourceText(id: string): Buffer | null {
    const location = this.leaves.locate(id);
    return location ? location.leaf.source(location.doc) : null;
  }

  /** A consistent snapshot for a query and its fetch phase; release it when done. */
  searcher(): Searcher {
    const leaves = this.leaves.pin();
    return new Searcher(leaves, this.fieldMap, this.inplace, () => this.leaves.unpin(leaves));
  }

  /**
   * A snapshot for a scroll or point-in-time context: documents and their content as they are
   * now, whatever writes, epochs and merges follow, until `release()` (snapshot-leaf.ts).
   */
  snapshot(): Searcher {
    const { leaves, close } = this.leaves.openSnapshot();
    return new Searcher(leaves, this.fieldMap, this.inplace, close);
  }

  /**
   * What a search, count or reader context reads: a snapshot of the copy as it is now (writes
   * visible at once), or, in refresh mode, the view of the last refresh, held until `release()`.
   */
  searchView(): Searcher {
    if (!this.views.active) return this.snapshot();
    const { leaves, release } = this.views.acquire();
    return new Searcher(leaves, this.fieldMap, this.inplace, release);
  }

  /** Refreshes the view searches read (refresh mode; a no-op otherwise); answers whether it changed. */
  refresh(): boolean {
    return this.views.refresh();
  }

  /** Resolves true once searches see every write applied now (at once when writes are visible at once), false after `timeoutMs`. */
  waitForRefresh(timeoutMs: number): Promise<boolean> {
    return this.views.waitFor(timeoutMs);
  }

  /** Field definitions of the current mapping (dotted path → field). */
  fields(): ReadonlyMap<string, FlatField> {
    return this.fieldMap;
  }

  /** Adopts a new mapping (fields only grow; types never change). */
  setMapping(mapping: Mapping): void {
    this.fieldMap = flattenMapping(mapping);
    this.inplace = [...this.fieldMap.values()].filter((field) => field.inplace);
    this.inplacePaths = this.inplace.map((field) => field.path);
    for (const field of this.inplace) this.leaves.mutable.markInplace(field.path);
  }

  /** Changes tunables at runtime. */
  updateSettings(settings: Partial<EngineSettings>): void {
    this.settings = { ...this.settings, ...settings };
    this.maintenance.updateSettings(this.settings);
    this.startEpochTimer();
    this.configureViews();
  }

  private configureViews(): void {
    this.views.configure(this.settings.visibility ?? 'immediate', this.settings.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS);
  }

  /** Retained changes with seq > afterSeq, oldest first (durable records only). */
  readChanges(afterSeq: number, limit: number): ChangeEntry[] {
    return this.wal.readRange(afterSeq + 1, limit).map((record) => changeOf(record.seq, record.timestamp, decodeRecord(record.payload)));
  }

  /** Lowest seq still retained in the log, and the highest durable one. */
  changeBounds(): { firstSeq: number; durableSeq: number } {
    return { firstSeq: this.wal.firstSeq, durableSeq: this.wal.durableSeq };
  }

  /** Subscribes to durable-seq advances (change-feed long polling). */
  onDurable(listener: (durableSeq: number) => void): () => void {
    return this.wal.onDurable(listener);
  }

  /** Freezes the mutable layer into a segment now. */
  epoch(): Promise<void> {
    return this.maintenance.epoch();
  }

  /** Manual compaction: freezes, then merges down to `maxSegments`, purging deleted documents. */
  forceMerge(options: { maxSegments?: number } = {}): Promise<MergeReport> {
    return this.maintenance.forceMerge(options.maxSegments ?? 1);
  }

  /** Resolves when queued epochs and merges (including background ones) are done. */
  waitForMaintenance(): Promise<void> {
    return this.maintenance.idle();
  }

  /**
   * Read-only verification of this copy's files (segment files by checksum, WAL files frame by
   * frame up to the end that was durable when it starts), while no epoch, merge or WAL trim runs;
   * writes and searches carry on. The document count is compared when no write was in flight.
   */
  verify(): Promise<LiveShardCheck> {
    if (this.closed) return Promise.reject(new EngineError('shard_closed', `shard [${this.uuid}] is closed`));
    return this.maintenance.exclusive(async () => {
      const walFiles = this.wal.durableFiles();
      const settled = walFiles.at(-1)?.lastSeq === this.wal.lastSeq;
      return verifyLiveShard({ dir: this.dir, uuid: this.uuid, walFiles, documents: settled ? this.stats().docs : null });
    });
  }

  /** Counters for stats endpoints. */
  stats(): ShardStats {
    const segments = this.leaves.segments.map((segment) => ({
      name: segment.name,
      docs: segment.numLiveDocs(),
      deletedDocs: segment.maxDoc - segment.numLiveDocs(),
      bytes: segment.bytesOnDisk(),
    }));
    const memory = [this.leaves.frozen, this.leaves.mutable].filter((leaf): leaf is MutableSegment => leaf !== null);
    const mutableDocs = memory.reduce((sum, leaf) => sum + leaf.numLiveDocs(), 0);
    const mutableDeleted = memory.reduce((sum, leaf) => sum + leaf.maxDoc - leaf.numLiveDocs(), 0);
    const walBytes = this.wal.stats().bytes;
    const progress = this.maintenance.progress();
    return {
      docs: segments.reduce((sum, segment) => sum + segment.docs, 0) + mutableDocs,
      deletedDocs: segments.reduce((sum, segment) => sum + segment.deletedDocs, 0) + mutableDeleted,
      segments,
      mutableDocs,
      walBytes,
      seqNo: this.wal.lastSeq,
      checkpointSeq: progress.checkpointSeq,
      epochs: progress.epochs,
      merges: progress.merges,
      lastEpochAt: progress.lastEpochAt,
      pendingMaintenance: this.maintenance.backlog(),
      heldWrites: this.heldWrites,
      heldMs: Math.round(this.heldMs),
      bytes: segments.reduce((sum, segment) => sum + segment.bytes, 0) + walBytes,
    };
  }

  private maybeEpoch(): void {
    const mutable = this.leaves.mutable;
    if (mutable.maxDoc >= this.settings.epochMaxDocs || mutable.bytes >= this.settings.epochMaxBytes) {
      this.maintenance.epoch().catch((error: unknown) => this.logger?.error({ err: error, shard: this.uuid }, 'epoch failed'));
    }
  }

  /**
   * Holds a client write while indexing outruns epochs, so that memory stays bounded whatever the
   * ingest rate: while the mutable layer is full and the previous one is still being written, or
   * while it holds `WRITE_HOLD_FACTOR` times the epoch size (an epoch waits behind a merge), until
   * an epoch freezes it. Null when the write may go on at once (it then applies in this turn).
   * Replicated records are never held: replicas follow their primary.
   */
  private writeHold(): Promise<void> | null {
    const limit = this.settings.epochMaxBytes;
    const bytes = this.leaves.mutable.bytes;
    if (bytes < limit || (this.leaves.frozen === null && bytes < WRITE_HOLD_FACTOR * limit)) return null;
    const start = performance.now();
    this.heldWrites++;
    const frozen = this.maintenance.mutableFrozen();
    this.maybeEpoch();
    return frozen.then(() => {
      this.heldWrites--;
      this.heldMs += performance.now() - start;
    });
  }

  private startEpochTimer(): void {
    if (this.epochTimer) clearInterval(this.epochTimer);
    this.epochTimer = setInterval(() => {
      if (this.maintenance.hasPendingWork()) {
        this.maintenance.epoch().catch((error: unknown) => this.logger?.error({ err: error, shard: this.uuid }, 'epoch failed'));
      } else {
        this.maintenance.trimChanges().catch((error: unknown) => this.logger?.error({ err: error, shard: this.uuid }, 'WAL trim failed'));
      }
    }, this.settings.epochIntervalMs);
    this.epochTimer.unref();
  }

  /** Stops timers, waits for running maintenance, syncs the WAL and closes files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.epochTimer) clearInterval(this.epochTimer);
    this.views.close();
    this.holds.close();
    await this.maintenance.idle();
    await this.wal.close();
    this.leaves.disposeAll();
  }
}

function checkConcurrency(op: WriteOp, location: DocLocation | null): void {
  if (op.ifSeqNo === undefined && op.ifPrimaryTerm === undefined) return;
  const meta = location ? location.leaf.meta(location.doc) : null;
  if (!meta || meta.seqNo !== op.ifSeqNo || (op.ifPrimaryTerm !== undefined && meta.primaryTerm !== op.ifPrimaryTerm)) {
    const current = meta ? `current document has seqNo [${documentSeqNo(meta.seqNo)}] and primary term [${meta.primaryTerm}]` : 'document does not exist';
    const required = op.ifSeqNo === undefined ? undefined : documentSeqNo(op.ifSeqNo);
    throw new EngineError(
      'version_conflict',
      `[${op.id}]: version conflict, required seqNo [${required}], primary term [${op.ifPrimaryTerm}]. ${current}`,
    );
  }
}

/** The version an externally versioned write sets (undefined without `externalVersion`); a version conflict when it is not newer. */
function externalVersionOf(op: IndexOp | DeleteOp, location: DocLocation | null): number | undefined {
  if (!op.externalVersion) return undefined;
  const { version, type } = op.externalVersion;
  const current = location ? location.leaf.meta(location.doc).version : null;
  if (current !== null && (type === 'external' ? version <= current : version < current)) {
    const comparison = type === 'external' ? 'higher or equal to' : 'higher than';
    throw new EngineError('version_conflict', `[${op.id}]: version conflict, current version [${current}] is ${comparison} the one provided [${version}]`);
  }
  return version;
}

async function removeOrphans(segmentsDir: string, live: Set<string>): Promise<void> {
  for (const entry of await fs.readdir(segmentsDir)) {
    if (!live.has(entry)) await fs.rm(path.join(segmentsDir, entry), { recursive: true, force: true });
  }
}
