/**
 * State shared by the passes of one segment write: the sources with their doc maps, the new
 * doc count, the files being written and cooperative yielding, so that a long epoch or merge
 * lets searches and writes run in between.
 */
import type { LeafReader } from './leaf-reader.ts';
import type { OutputFile } from './segment-file.ts';

/** A leaf to copy into the new segment and where its docs go. */
export interface SegmentSource {
  reader: LeafReader;
  /** Old doc -> new doc, -1 = dropped. Kept docs of source i follow those of source i-1, in order. */
  docMap: Int32Array;
}

const CHECK_EVERY = 64;

/** Writer-wide state and the cooperative pause. */
export class WriteContext {
  private deadline: number;
  private countdown = CHECK_EVERY;
  private readonly openFiles = new Set<OutputFile>();

  constructor(
    readonly sources: SegmentSource[],
    /** Number of docs of the new segment. */
    readonly maxDoc: number,
    private readonly yieldEveryMs: number,
  ) {
    this.deadline = performance.now() + yieldEveryMs;
  }

  /** Registers a file whose buffered bytes are flushed on every pause. */
  track(file: OutputFile): void {
    this.openFiles.add(file);
  }

  /** Stops flushing a file (it was finished or abandoned). */
  untrack(file: OutputFile): void {
    this.openFiles.delete(file);
  }

  /** Cheap check (the clock is read every 64 calls): true when the writer should pause. */
  pauseDue(): boolean {
    if (--this.countdown > 0) return false;
    this.countdown = CHECK_EVERY;
    return performance.now() >= this.deadline;
  }

  /** Reads the clock: true when the pause deadline has passed (for coarse units of work). */
  overdue(): boolean {
    return performance.now() >= this.deadline;
  }

  /** Flushes buffered file bytes and lets the event loop run. */
  async pause(): Promise<void> {
    for (const file of this.openFiles) await file.drain();
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.deadline = performance.now() + this.yieldEveryMs;
    this.countdown = CHECK_EVERY;
  }

  /** Pauses when due; call between units of work. */
  async maybePause(): Promise<void> {
    if (this.pauseDue()) await this.pause();
  }

  /**
   * Visits every kept doc in new-doc order (source 0 first), pausing when due. The visitor gets
   * the source index, the doc id in the source and the new doc id.
   */
  async forEachKeptDoc(visit: (sourceIndex: number, oldDoc: number, newDoc: number) => void): Promise<void> {
    for (let sourceIndex = 0; sourceIndex < this.sources.length; sourceIndex++) {
      const docMap = this.sources[sourceIndex]!.docMap;
      for (let oldDoc = 0; oldDoc < docMap.length; oldDoc++) {
        const newDoc = docMap[oldDoc]!;
        if (newDoc < 0) continue;
        visit(sourceIndex, oldDoc, newDoc);
        if (this.pauseDue()) await this.pause();
      }
    }
  }
}
