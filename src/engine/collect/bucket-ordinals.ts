/**
 * Bucket bookkeeping shared by the bucket aggregators. A bucket aggregator nested under another
 * one sees each doc together with its parent's bucket ordinal (the "owner"); it maps
 * (owner, key) to a dense ordinal of its own, which its sub-aggregators use in turn. Per-bucket
 * state then lives in flat growable arrays indexed by ordinal: no object per doc or per bucket.
 */

/** A growable Float64Array whose new slots start at `initial`. */
export class GrowableFloats {
  data: Float64Array;

  constructor(
    private readonly initial = 0,
    capacity = 16,
  ) {
    this.data = new Float64Array(capacity).fill(initial);
  }

  /** Makes slot `index` addressable. */
  ensure(index: number): void {
    if (index < this.data.length) return;
    let capacity = this.data.length * 2;
    while (capacity <= index) capacity *= 2;
    const next = new Float64Array(capacity).fill(this.initial);
    next.set(this.data);
    this.data = next;
  }

  /** Value of a slot (`initial` when never written). */
  get(index: number): number {
    return index < this.data.length ? this.data[index]! : this.initial;
  }
}

/** Dense ids for distinct keys (terms or numbers) in first-seen order. */
export class KeyDictionary<K extends string | number> {
  private readonly ids = new Map<K, number>();
  readonly keys: K[] = [];

  /** Id of a key, assigned on first sight. */
  idOf(key: K): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.keys.length;
      this.ids.set(key, id);
      this.keys.push(key);
    }
    return id;
  }

  /** Number of distinct keys seen. */
  get size(): number {
    return this.keys.length;
  }
}

/** Maps (owner bucket, key id) to dense bucket ordinals and remembers each owner's buckets. */
export class BucketOrdinals {
  /** Fast path for owner 0 (the only owner of a top-level aggregator): key id → ordinal + 1. */
  private rootOrdinals = new Int32Array(64);
  private readonly nested = new Map<number, Map<number, number>>();
  private readonly keyIds: number[] = [];
  private readonly byOwner = new Map<number, number[]>();

  /** Number of ordinals handed out. */
  get size(): number {
    return this.keyIds.length;
  }

  /** Ordinal of (owner, keyId), created on first sight. */
  ordinal(owner: number, keyId: number): number {
    if (owner === 0) {
      if (keyId >= this.rootOrdinals.length) {
        let capacity = this.rootOrdinals.length * 2;
        while (capacity <= keyId) capacity *= 2;
        const next = new Int32Array(capacity);
        next.set(this.rootOrdinals);
        this.rootOrdinals = next;
      }
      const existing = this.rootOrdinals[keyId]!;
      if (existing !== 0) return existing - 1;
      const ordinal = this.create(owner, keyId);
      this.rootOrdinals[keyId] = ordinal + 1;
      return ordinal;
    }
    let ordinals = this.nested.get(owner);
    if (ordinals === undefined) {
      ordinals = new Map();
      this.nested.set(owner, ordinals);
    }
    const existing = ordinals.get(keyId);
    if (existing !== undefined) return existing;
    const ordinal = this.create(owner, keyId);
    ordinals.set(keyId, ordinal);
    return ordinal;
  }

  private create(owner: number, keyId: number): number {
    const ordinal = this.keyIds.length;
    this.keyIds.push(keyId);
    let list = this.byOwner.get(owner);
    if (list === undefined) {
      list = [];
      this.byOwner.set(owner, list);
    }
    list.push(ordinal);
    return ordinal;
  }

  /** Ordinals created for an owner. */
  ordinalsOf(owner: number): readonly number[] {
    return this.byOwner.get(owner) ?? [];
  }

  /** Key id of an ordinal. */
  keyIdOf(ordinal: number): number {
    return this.keyIds[ordinal]!;
  }
}
