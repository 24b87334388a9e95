import type { LeafReader } from '../segment/leaf-reader.ts';
import type { SegmentReader } from '../segment/segment-reader.ts';
import { MutableSegment } from '../mutable/mutable-segment.ts';
import { frozenOverlayView, type FieldOverlay } from '../mutable/field-overlay.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { SnapshotLeaf } from './snapshot-leaf.ts';

/** A leaf whose deletions, doc meta and field overlays the shard may change after it was written. */
export type WritableLeaf = LeafReader & {
  deleteDoc(doc: number): boolean;
  setMeta(doc: number, seqNo: number, version: number, primaryTerm: number): void;
  readonly overlay: FieldOverlay;
  applyFields(doc: number, texts: ReadonlyMap<string, string | null>, fields: ReadonlyMap<string, FlatField>, strictNumbers: boolean): void;
};

/** Where a live document is: its leaf and doc id. */
export interface DocLocation {
  leaf: WritableLeaf;
  doc: number;
}

/**
 * The leaves of a shard and their lifetimes: immutable segments (reference counted by open
 * searchers), the layer an epoch is freezing, and the mutable layer taking writes.
 */
export class LeafSet {
  segments: SegmentReader[] = [];
  frozen: MutableSegment | null = null;
  mutable: MutableSegment;
  private readonly references = new Map<SegmentReader, number>();
  private readonly retired = new Set<SegmentReader>();
  /** Open snapshots' views, by the leaf they read (see `preserve`). */
  private readonly snapshots = new Map<LeafReader, Set<SnapshotLeaf>>();

  constructor(
    mutable: MutableSegment,
    private readonly dispose: (segment: SegmentReader, removeFiles: boolean) => void,
  ) {
    this.mutable = mutable;
  }

  /** Finds the live copy of a document, newest layers first. */
  locate(id: string): DocLocation | null {
    let doc = this.mutable.lookupId(id);
    if (doc >= 0) return { leaf: this.mutable, doc };
    if (this.frozen) {
      doc = this.frozen.lookupId(id);
      if (doc >= 0) return { leaf: this.frozen, doc };
    }
    for (let index = this.segments.length - 1; index >= 0; index--) {
      const segment = this.segments[index]!;
      doc = segment.lookupId(id);
      if (doc >= 0) return { leaf: segment as unknown as WritableLeaf, doc };
    }
    return null;
  }

  /** Current leaves in search order, pinning segments until `unpin` is called with the result. */
  pin(): LeafReader[] {
    for (const segment of this.segments) this.references.set(segment, (this.references.get(segment) ?? 0) + 1);
    const leaves: LeafReader[] = [...this.segments];
    if (this.frozen) leaves.push(this.frozen);
    leaves.push(this.mutable);
    return leaves;
  }

  /**
   * A snapshot of the current leaves, in search order: segments are pinned (their files outlive a
   * merge), and each leaf is read as it is now until `close` (snapshot-leaf.ts).
   */
  openSnapshot(): { leaves: SnapshotLeaf[]; close: () => void } {
    const pinned = this.pin();
    // Each snapshot reads its leaf's field overlays as they are now (field-overlay.ts).
    const leaves = pinned.map((leaf) => new SnapshotLeaf(frozenOverlayView(leaf as WritableLeaf), leaf instanceof MutableSegment));
    leaves.forEach((view, index) => {
      let views = this.snapshots.get(pinned[index]!);
      if (!views) this.snapshots.set(pinned[index]!, (views = new Set()));
      views.add(view);
    });
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      leaves.forEach((view, index) => {
        const views = this.snapshots.get(pinned[index]!);
        views?.delete(view);
        if (views?.size === 0) this.snapshots.delete(pinned[index]!);
      });
      this.unpin(pinned);
    };
    return { leaves, close };
  }

  /**
   * Lets every open snapshot of the doc's leaf save its state; call before deleting it (`inPlace`
   * false) or changing it where it lives (`inPlace` true: its source is saved too).
   */
  preserve(location: DocLocation, inplaceFields: readonly string[], inPlace: boolean): void {
    const views = this.snapshots.get(location.leaf);
    if (views) for (const view of views) view.preserve(location.doc, inplaceFields, inPlace);
  }

  /** Releases segments pinned by `pin`; retired ones with no reader left are disposed. */
  unpin(leaves: readonly LeafReader[]): void {
    for (const leaf of leaves) {
      const segment = leaf as SegmentReader;
      const count = this.references.get(segment);
      if (count === undefined) continue;
      if (count <= 1) {
        this.references.delete(segment);
        if (this.retired.delete(segment)) this.dispose(segment, true);
      } else this.references.set(segment, count - 1);
    }
  }

  /** Replaces `removed` segments by `added` (at the position of the first removed one). */
  replace(removed: readonly SegmentReader[], added: SegmentReader | null): void {
    const gone = new Set(removed);
    const position = this.segments.findIndex((segment) => gone.has(segment));
    const kept = this.segments.filter((segment) => !gone.has(segment));
    if (added) kept.splice(position < 0 ? kept.length : Math.min(position, kept.length), 0, added);
    this.segments = kept;
    for (const segment of removed) {
      if (this.references.has(segment)) this.retired.add(segment);
      else this.dispose(segment, true);
    }
  }

  /** Closes every segment and removes retired ones regardless of readers (shard close). */
  disposeAll(): void {
    for (const segment of this.retired) this.dispose(segment, true);
    this.retired.clear();
    for (const segment of this.segments) this.dispose(segment, false);
    this.segments = [];
  }
}
