import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { setKey } from '../mapping/json-value.ts';
import { segmentFieldList, type FlatField } from '../mapping/mapping.ts';
import { releaseFreedMemorySoon } from '../memory/heap-release.ts';
import { findTieredMerge, planForceMerge } from '../merge/merge-policy.ts';
import { MutableSegment } from '../mutable/mutable-segment.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { inplaceGeneration, SegmentReader } from '../segment/segment-reader.ts';
import { buildDocMaps, writeSegment, type SegmentFieldInfo } from '../segment/segment-writer.ts';
import { frozenOverlayView, type FieldOverlay } from '../mutable/field-overlay.ts';
import type { WriteAheadLog } from '../wal/wal.ts';
import type { LeafSet, WritableLeaf } from './leaf-set.ts';
import { maintenanceSlots } from './maintenance-slots.ts';
import { writeManifest, type Manifest, type ManifestSegment } from './manifest.ts';
import type { EngineSettings } from './settings.ts';

/** Fault-injection points of epochs and merges (tests only). */
export interface ShardFaults {
  /** Called after each segment file is written (throw or exit to simulate a crash). */
  afterSegmentFile?: (file: string) => void;
  /** Called after a new segment is complete but before the manifest references it. */
  beforeManifest?: () => void;
  /** Called at the start of a merge pass (throw to fail it). */
  beforeMerge?: () => void;
  /** Called after each segment file a merge pass writes (after `afterSegmentFile`). */
  afterMergeFile?: (file: string) => void;
  /** Called after a field-level update's WAL record is appended, before its overlay is applied. */
  afterFieldsAppend?: () => void;
}

/** Share of a segment's docs with field overlays past which an epoch queues its rewrite. */
const OVERLAY_REWRITE_SHARE = 0.25;

/** Bytes of field text applied to a segment as overlays past which an epoch queues its rewrite. */
const OVERLAY_REWRITE_BYTES = 32 * 1024 * 1024;

/** Outcome of a manual compaction on one shard. */
export interface MergeReport {
  segmentsBefore: number;
  segmentsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
  deletedPurged: number;
}

/**
 * Epochs and merges of one shard, run one at a time on a queue (and, across the thread's shards, at
 * most `MAINTENANCE_SLOTS_PER_THREAD` at once): the mutable layer is frozen into
 * a segment, dirty live-docs / inplace / meta generations are written, then the manifest is
 * replaced atomically and WAL files below the checkpoint (and outside retention) are removed.
 */
export class Maintenance {
  private queue: Promise<unknown> = Promise.resolve();
  private pendingEpoch: Promise<void> | null = null;
  private pendingTrim: Promise<void> | null = null;
  private fields: () => ReadonlyMap<string, FlatField> = () => new Map();
  private inplaceFields: () => string[] = () => [];
  private mutableGeneration = 1;
  private readonly removalsAfterManifest = new Set<string>();
  private queuedTasks = 0;
  /** Writes held until the mutable layer is next frozen by an epoch (or an epoch ends without freezing it). */
  private swapWaiters: Array<() => void> = [];

  constructor(
    private readonly dir: string,
    private readonly wal: WriteAheadLog,
    private readonly leaves: LeafSet,
    private readonly manifest: Manifest,
    private settings: EngineSettings,
    private readonly faults: ShardFaults,
    private readonly logger: Logger | undefined,
  ) {}

  /** Connects the shard's current field definitions. */
  bind(fields: () => ReadonlyMap<string, FlatField>, inplaceFields: () => string[]): void {
    this.fields = fields;
    this.inplaceFields = inplaceFields;
  }

  /** Adopts new settings. */
  updateSettings(settings: EngineSettings): void {
    this.settings = settings;
  }

  /** True when an epoch would have something to persist. */
  hasPendingWork(): boolean {
    return this.leaves.mutable.maxDoc > 0 || this.leaves.frozen !== null || this.leaves.segments.some(isDirty);
  }

  /** Checkpoint and counters. */
  progress(): { checkpointSeq: number; epochs: number; merges: number; lastEpochAt: number | null } {
    const { checkpointSeq, epochs, merges, lastEpochAt } = this.manifest;
    return { checkpointSeq, epochs, merges, lastEpochAt };
  }

  /** Epochs and merges queued or running (the merge backlog shown in node stats). */
  backlog(): number {
    return this.queuedTasks;
  }

  /**
   * Resolves once an epoch has frozen the mutable layer that is current now, or an epoch ended
   * without freezing it (it failed, or there was nothing to write); the caller queues that epoch.
   */
  mutableFrozen(): Promise<void> {
    return new Promise((resolve) => this.swapWaiters.push(resolve));
  }

  /** Resolves when queued work is done. */
  async idle(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.queue;
      await current.catch(() => undefined);
    } while (current !== this.queue);
  }

  /** Called when a segment leaves the shard: files go once no manifest references them. */
  removeSegmentFiles(name: string): void {
    if (this.manifest.segments.some((entry) => entry.meta.name === name)) this.removalsAfterManifest.add(name);
    else void fs.rm(this.segmentDir(name), { recursive: true, force: true });
  }

  /** Queues an epoch (coalesced with one already waiting). */
  epoch(): Promise<void> {
    if (this.pendingEpoch) return this.pendingEpoch;
    const run = this.enqueue(async () => {
      this.pendingEpoch = null;
      await this.runEpoch();
    });
    this.pendingEpoch = run;
    return run;
  }

  /** Queues a manual compaction down to `maxSegments`. */
  forceMerge(maxSegments: number): Promise<MergeReport> {
    return this.enqueue(async () => {
      await this.runEpoch();
      const before = this.segmentFigures();
      this.faults.beforeMerge?.();
      const groups = planForceMerge(this.candidates(), Math.max(1, maxSegments));
      for (const group of groups) await this.runMerge(group);
      const after = this.segmentFigures();
      return {
        segmentsBefore: before.count,
        segmentsAfter: after.count,
        bytesBefore: before.bytes,
        bytesAfter: after.bytes,
        deletedPurged: before.deleted - after.deleted,
      };
    });
  }

  /**
   * Runs `task` on the queue, so that no epoch, merge or WAL trim replaces the manifest or removes
   * files while it runs (a read of the shard's files); it is not counted as maintenance backlog.
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Queues an epoch or merge; it runs in its turn on this shard and in a free slot of the thread. */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    this.queuedTasks++;
    return this.exclusive(() => maintenanceSlots.run(task)).finally(() => this.queuedTasks--);
  }

  private segmentDir(name: string): string {
    return path.join(this.dir, 'segments', name);
  }

  private async runEpoch(): Promise<void> {
    try {
      await this.freezeAndCommit();
    } finally {
      this.releaseSwapWaiters();
    }
  }

  private releaseSwapWaiters(): void {
    const waiters = this.swapWaiters;
    this.swapWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async freezeAndCommit(): Promise<void> {
    const frozen = this.leaves.frozen ?? this.leaves.mutable;
    if (!this.leaves.frozen && frozen.maxDoc > 0) {
      this.leaves.frozen = frozen;
      this.leaves.mutable = new MutableSegment(this.mutableGeneration++, this.inplaceFields());
      this.releaseSwapWaiters();
    }
    const checkpointSeq = this.wal.lastSeq;
    if (this.leaves.frozen) {
      const segment = await this.writeFrom([frozen]);
      if (segment) this.leaves.segments.push(segment);
      this.leaves.frozen = null;
      releaseFreedMemorySoon();
    }
    this.manifest.epochs++;
    this.manifest.lastEpochAt = Date.now();
    await this.commit(checkpointSeq);
    await this.trimWal();
    if (this.settings.mergeEnabled) {
      const merge = findTieredMerge(this.candidates(), {
        segmentsPerTier: this.settings.mergeSegmentsPerTier,
        maxSegmentBytes: this.settings.mergeMaxSegmentBytes,
      });
      if (merge) void this.enqueue(() => this.runMerge(merge)).catch((error: unknown) => this.logger?.error({ err: error }, 'merge failed'));
    }
    // A segment whose field overlays cover a large share of its docs, or took much text, is rewritten, folding them in.
    for (const segment of this.leaves.segments) {
      const overlay = segment.overlay;
      if (overlay.size > 0 && (overlay.size >= segment.maxDoc * OVERLAY_REWRITE_SHARE || overlay.bytes >= OVERLAY_REWRITE_BYTES)) {
        const name = segment.name;
        void this.enqueue(() => this.runMerge([name])).catch((error: unknown) => this.logger?.error({ err: error }, 'overlay rewrite failed'));
      }
    }
  }

  private async runMerge(names: string[]): Promise<void> {
    const sources = this.leaves.segments.filter((segment) => names.includes(segment.name));
    if (sources.length === 0) return;
    const merged = await this.writeFrom(sources, this.faults.afterMergeFile);
    this.leaves.replace(sources, merged);
    releaseFreedMemorySoon();
    this.manifest.merges++;
    await this.commit(this.manifest.checkpointSeq);
  }

  /** Writes one segment from source leaves, then carries over changes made while it was written. */
  private async writeFrom(sources: readonly LeafReader[], afterMergeFile?: (file: string) => void): Promise<SegmentReader | null> {
    const docMaps = buildDocMaps(sources);
    const kept = docMaps.reduce((sum, map) => sum + map.reduce((count, value) => count + (value >= 0 ? 1 : 0), 0), 0);
    if (kept === 0) return null;
    const name = `seg_${String(this.manifest.nextSegmentNumber++).padStart(6, '0')}`;
    const inplace = this.inplaceFields();
    // The writer reads each source's field overlays as they are now; later ones are carried over.
    const views = sources.map((source) => frozenOverlayView(source as WritableLeaf));
    const meta = await writeSegment({
      dir: this.segmentDir(name),
      name,
      sources: views.map((reader, index) => ({ reader, docMap: docMaps[index]! })),
      fields: segmentFields(this.fields(), views),
      inplaceFields: inplace,
      faults: {
        afterFileWritten: (file) => {
          this.faults.afterSegmentFile?.(file);
          afterMergeFile?.(file);
        },
      },
    });
    const segment = SegmentReader.open(this.segmentDir(name), meta, { liveDocsGen: 0, inplaceGens: {}, metaGen: 0 }, this.fields());
    sources.forEach((source, index) => {
      carryOverlays(source as WritableLeaf, views[index]!.overlay, docMaps[index]!, segment, this.fields());
      carryOver(source, docMaps[index]!, segment as unknown as WritableLeaf, inplace);
    });
    return segment;
  }

  /** Persists dirty generations and replaces the manifest. */
  private async commit(checkpointSeq: number): Promise<void> {
    const entries: ManifestSegment[] = [];
    for (const segment of this.leaves.segments) {
      const previous = this.manifest.segments.find((entry) => entry.meta.name === segment.name);
      const entry: ManifestSegment = previous
        ? { ...previous, inplaceGens: { ...previous.inplaceGens } }
        : { meta: segment.segmentMeta, liveDocsGen: 0, inplaceGens: {}, metaGen: 0 };
      if (segment.dirtyLiveDocs) await segment.writeLiveDocs(++entry.liveDocsGen);
      for (const field of [...segment.dirtyInplace]) {
        const generation = inplaceGeneration(entry.inplaceGens, field) + 1;
        setKey(entry.inplaceGens, field, generation);
        await segment.writeInplaceColumn(field, generation);
      }
      if (segment.dirtyMeta) await segment.writeMeta(++entry.metaGen);
      if (segment.dirtyOverlay) {
        entry.overlayGen = (entry.overlayGen ?? 0) + 1;
        await segment.writeOverlay(entry.overlayGen);
      }
      entries.push(entry);
    }
    // Records up to the checkpoint must be durable before the manifest claims them.
    await this.wal.sync();
    this.faults.beforeManifest?.();
    this.manifest.segments = entries;
    this.manifest.checkpointSeq = checkpointSeq;
    this.manifest.wal = this.wal.checkpoint(checkpointSeq);
    await writeManifest(this.dir, this.manifest);
    for (const name of [...this.removalsAfterManifest]) {
      this.removalsAfterManifest.delete(name);
      await fs.rm(this.segmentDir(name), { recursive: true, force: true });
    }
    for (const segment of this.leaves.segments) {
      const entry = entries.find((candidate) => candidate.meta.name === segment.name)!;
      await segment.removeStaleGenerations(entry);
    }
  }

  /**
   * Removes WAL files below the checkpoint whose records are all older than the change-feed
   * retention. Record ages come from the append times stored in the log itself, so the bound
   * holds across restarts.
   */
  private async trimWal(): Promise<void> {
    await this.wal.removeUpTo(this.manifest.checkpointSeq, Date.now() - this.settings.changesRetentionMs);
  }

  /** Queues a WAL trim on its own (for idle shards, whose epochs never run), coalesced with one already waiting. */
  trimChanges(): Promise<void> {
    if (this.pendingTrim) return this.pendingTrim;
    const run = this.enqueue(async () => {
      this.pendingTrim = null;
      await this.trimWal();
    });
    this.pendingTrim = run;
    return run;
  }

  private candidates(): { name: string; bytes: number; liveDocs: number; maxDoc: number }[] {
    return this.leaves.segments.map((segment) => ({
      name: segment.name,
      bytes: segment.bytesOnDisk(),
      liveDocs: segment.numLiveDocs(),
      maxDoc: segment.maxDoc,
    }));
  }

  private segmentFigures(): { count: number; bytes: number; deleted: number } {
    const list = this.candidates();
    return {
      count: list.length,
      bytes: list.reduce((sum, segment) => sum + segment.bytes, 0),
      deleted: list.reduce((sum, segment) => sum + segment.maxDoc - segment.liveDocs, 0),
    };
  }
}

function isDirty(segment: SegmentReader): boolean {
  return segment.dirtyLiveDocs || segment.dirtyInplace.size > 0 || segment.dirtyMeta || segment.dirtyOverlay;
}

/** How each mapped field is written into a segment. */
export function segmentFields(fields: ReadonlyMap<string, FlatField>, sources: readonly LeafReader[]): SegmentFieldInfo[] {
  const present = new Set(sources.flatMap((source) => [...source.keywordFields(), ...source.numericFields()]));
  const infos: SegmentFieldInfo[] = [];
  for (const field of segmentFieldList(fields, (path) => present.has(path))) {
    if (field.storage === 'none') continue;
    infos.push({
      name: field.path,
      kind: field.storage,
      positions: field.storage === 'text',
      inplace: field.inplace,
      rangeIndex: field.type !== 'boolean',
    });
  }
  return infos;
}

/**
 * Field-level updates applied to a source while its segment was being written: the writer read
 * the overlays as `frozen` holds them, so the doc's current overlay is applied to the new segment,
 * whose own values of those fields are then the frozen ones (statistics stay exact).
 */
function carryOverlays(source: WritableLeaf, frozen: FieldOverlay, docMap: Int32Array, target: SegmentReader, fields: ReadonlyMap<string, FlatField>): void {
  if (source.overlay.size === 0) return;
  for (const [doc, texts] of source.overlay.entries()) {
    const mapped = docMap[doc]!;
    if (mapped >= 0 && frozen.textsOf(doc) !== texts) target.applyFields(mapped, texts, fields, false, false);
  }
}

/**
 * Deletions, inplace values and doc meta that changed in a source while its segment was being
 * written are applied to the new segment, so nothing done during an epoch or merge is lost.
 */
function carryOver(source: LeafReader, docMap: Int32Array, target: WritableLeaf, inplaceFields: readonly string[]): void {
  const columns = inplaceFields
    .map((field) => ({ from: source.inplaceColumn(field), to: target.inplaceColumn(field) }))
    .filter((pair) => pair.from && pair.to);
  for (let doc = 0; doc < docMap.length; doc++) {
    const mapped = docMap[doc]!;
    if (mapped < 0) continue;
    if (!source.isLive(doc)) target.deleteDoc(mapped);
    for (const { from, to } of columns) {
      const value = from!.get(doc);
      const current = to!.get(mapped);
      if (!(value === current || (Number.isNaN(value) && Number.isNaN(current)))) to!.set(mapped, value);
    }
    const before = source.metaNumbers(doc);
    const after = target.metaNumbers(mapped);
    if (before.seqNo !== after.seqNo || before.version !== after.version || before.primaryTerm !== after.primaryTerm) {
      target.setMeta(mapped, before.seqNo, before.version, before.primaryTerm);
    }
  }
}
