/**
 * Top-k by score: a binary min-heap over parallel typed arrays whose root is the worst kept hit.
 * Order: score descending, then (leaf, doc) ascending. Docs arrive in increasing (leaf, doc)
 * order, so a newcomer enters only with a score strictly above the root's.
 */
import type { ShardHit } from '../query/search-request.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';

/** Keeps the `capacity` best-scoring hits of a shard. */
export class TopScoreCollector {
  private readonly scores: Float64Array;
  private readonly leaves: Int32Array;
  private readonly docs: Int32Array;
  private size = 0;
  private leafIndex = 0;

  constructor(readonly capacity: number) {
    this.scores = new Float64Array(capacity);
    this.leaves = new Int32Array(capacity);
    this.docs = new Int32Array(capacity);
  }

  /** Starts collecting the docs of another leaf (leaves in increasing order). */
  setLeaf(leafIndex: number, _leaf?: LeafReader, _docBase?: number): void {
    this.leafIndex = leafIndex;
  }

  /** Scores a hit must exceed to enter; -Infinity while the heap is not full. */
  threshold(): number {
    if (this.capacity === 0) return Infinity;
    return this.size < this.capacity ? -Infinity : this.scores[0]!;
  }

  /** Offers a hit of the current leaf. */
  collect(doc: number, score: number): void {
    if (this.size < this.capacity) {
      const slot = this.size++;
      this.scores[slot] = score;
      this.leaves[slot] = this.leafIndex;
      this.docs[slot] = doc;
      this.siftUp(slot);
      return;
    }
    if (this.capacity === 0 || !(score > this.scores[0]!)) return;
    this.scores[0] = score;
    this.leaves[0] = this.leafIndex;
    this.docs[0] = doc;
    this.siftDown(0);
  }

  /** The kept hits, best first. */
  hits(): ShardHit[] {
    const hits: ShardHit[] = [];
    for (let i = 0; i < this.size; i++) hits.push({ leaf: this.leaves[i]!, doc: this.docs[i]!, score: this.scores[i]! });
    hits.sort((left, right) => right.score - left.score || left.leaf - right.leaf || left.doc - right.doc);
    return hits;
  }

  /** Whether slot `a` is a worse hit than slot `b`. */
  private worse(a: number, b: number): boolean {
    const scoreA = this.scores[a]!;
    const scoreB = this.scores[b]!;
    if (scoreA !== scoreB) return scoreA < scoreB;
    const leafA = this.leaves[a]!;
    const leafB = this.leaves[b]!;
    if (leafA !== leafB) return leafA > leafB;
    return this.docs[a]! > this.docs[b]!;
  }

  private swap(a: number, b: number): void {
    const score = this.scores[a]!;
    this.scores[a] = this.scores[b]!;
    this.scores[b] = score;
    const leaf = this.leaves[a]!;
    this.leaves[a] = this.leaves[b]!;
    this.leaves[b] = leaf;
    const doc = this.docs[a]!;
    this.docs[a] = this.docs[b]!;
    this.docs[b] = doc;
  }

  private siftUp(start: number): void {
    let slot = start;
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      if (!this.worse(slot, parent)) break;
      this.swap(slot, parent);
      slot = parent;
    }
  }

  private siftDown(start: number): void {
    let slot = start;
    for (;;) {
      const left = 2 * slot + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.worse(right, left) ? right : left;
      if (!this.worse(child, slot)) break;
      this.swap(slot, child);
      slot = child;
    }
  }
}
