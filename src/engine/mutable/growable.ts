/** Typed arrays that double their capacity, for the mutable layer's per-doc data. */

/** A growable Float64Array whose new slots start as NaN (missing). */
export class FloatVector {
  data: Float64Array;
  length = 0;
  constructor(capacity = 16) {
    this.data = new Float64Array(capacity).fill(NaN);
  }
  /** Makes sure slots 0..size-1 exist. */
  ensure(size: number): void {
    if (size <= this.data.length) {
      if (size > this.length) this.length = size;
      return;
    }
    let capacity = this.data.length * 2;
    while (capacity < size) capacity *= 2;
    const next = new Float64Array(capacity).fill(NaN);
    next.set(this.data);
    this.data = next;
    this.length = size;
  }
}

/** A growable Uint8Array (zero-filled). */
export class ByteVector {
  data: Uint8Array;
  length = 0;
  constructor(capacity = 16) {
    this.data = new Uint8Array(capacity);
  }
  /** Makes sure slots 0..size-1 exist. */
  ensure(size: number): void {
    if (size > this.data.length) {
      let capacity = this.data.length * 2;
      while (capacity < size) capacity *= 2;
      const next = new Uint8Array(capacity);
      next.set(this.data);
      this.data = next;
    }
    if (size > this.length) this.length = size;
  }
}
