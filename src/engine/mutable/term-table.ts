/**
 * Interns the terms of one field as dense ids 0, 1, 2, … in first-seen order. An open-addressing
 * table hashes UTF-16 code units and keeps each term's code units in one flat array, so a term can
 * be looked up as a span of a larger string without slicing it: only a new term becomes a string
 * of its own.
 */
import { ownedString } from '../analysis/folding.ts';

const INITIAL_SLOTS = 1024;

/** FNV-1a over the code units of text[start, end), with a final avalanche. */
function hashSpan(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5 | 0;
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x7feb352d);
  return hash ^ (hash >>> 15);
}

/** Ints per slot: hash, id + 1 (0: empty slot), offset of the term's code units in `chars`, length. */
const SLOT_INTS = 4;

/** See the module comment. */
export class TermTable {
  /** Terms by id. */
  readonly terms: string[] = [];
  /** The probe reads one slot (one cache line) and, on a hash and length match, the term's code units. */
  private slots = new Int32Array(INITIAL_SLOTS * SLOT_INTS);
  private mask = INITIAL_SLOTS - 1;
  /** Code units of every term, back to back in id order. */
  private chars = new Uint16Array(INITIAL_SLOTS * 8);
  private charsUsed = 0;
  /** Where each term's code units start in `chars`, by id; a term ends where the next one starts. */
  private starts = new Int32Array(INITIAL_SLOTS);

  /** Number of terms. */
  get size(): number {
    return this.terms.length;
  }

  /** Id of the term `text.slice(start, end)`, adding it when new. */
  internSpan(text: string, start: number, end: number): number {
    const hash = hashSpan(text, start, end);
    const slot = this.find(text, start, end, hash);
    const entry = this.slots[slot * SLOT_INTS + 1]!;
    return entry !== 0 ? entry - 1 : this.add(text, start, end, hash, slot);
  }

  /** Id of `term`, adding it when new. */
  intern(term: string): number {
    return this.internSpan(term, 0, term.length);
  }

  /** Term ids in UTF-16 code unit order (the order of `<` on the terms). */
  sortedIds(): Int32Array {
    const ids = new Int32Array(this.terms.length);
    for (let id = 0; id < ids.length; id++) ids[id] = id;
    sortTermIds(ids, this.chars, this.starts);
    return ids;
  }

  /** Id of `term`, or -1 when the field does not have it. */
  lookup(term: string): number {
    const slot = this.find(term, 0, term.length, hashSpan(term, 0, term.length));
    return this.slots[slot * SLOT_INTS + 1]! - 1;
  }

  /** The slot holding text[start, end), or the empty slot where it would go. */
  private find(text: string, start: number, end: number, hash: number): number {
    const slots = this.slots;
    const mask = this.mask;
    const length = end - start;
    let slot = hash & mask;
    for (;;) {
      const at = slot * SLOT_INTS;
      if (slots[at + 1] === 0) return slot;
      if (slots[at] === hash && slots[at + 3] === length) {
        const chars = this.chars;
        let offset = slots[at + 2]!;
        let index = start;
        while (index < end && chars[offset] === text.charCodeAt(index)) {
          offset++;
          index++;
        }
        if (index === end) return slot;
      }
      slot = (slot + 1) & mask;
    }
  }

  private add(text: string, start: number, end: number, hash: number, slot: number): number {
    const id = this.terms.length;
    this.terms.push(ownedString(text.slice(start, end)));
    const length = end - start;
    if (this.charsUsed + length > this.chars.length) {
      let capacity = this.chars.length * 2;
      while (capacity < this.charsUsed + length) capacity *= 2;
      const chars = new Uint16Array(capacity);
      chars.set(this.chars.subarray(0, this.charsUsed));
      this.chars = chars;
    }
    const offset = this.charsUsed;
    for (let index = 0; index < length; index++) this.chars[offset + index] = text.charCodeAt(start + index);
    this.charsUsed += length;
    if (id + 1 >= this.starts.length) {
      const starts = new Int32Array(this.starts.length * 2);
      starts.set(this.starts);
      this.starts = starts;
    }
    this.starts[id] = offset;
    this.starts[id + 1] = this.charsUsed;
    const at = slot * SLOT_INTS;
    this.slots[at] = hash;
    this.slots[at + 1] = id + 1;
    this.slots[at + 2] = offset;
    this.slots[at + 3] = length;
    // Load factor at most 1/2.
    if ((id + 1) * 2 > this.mask + 1) this.rehash();
    return id;
  }

  private rehash(): void {
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(size * SLOT_INTS);
    const mask = size - 1;
    const old = this.slots;
    for (let at = 0; at < old.length; at += SLOT_INTS) {
      if (old[at + 1] === 0) continue;
      let slot = old[at]! & mask;
      while (slots[slot * SLOT_INTS + 1] !== 0) slot = (slot + 1) & mask;
      slots.set(old.subarray(at, at + SLOT_INTS), slot * SLOT_INTS);
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** Partitions at most this long are sorted by insertion. */
const INSERTION_SORT_MAX = 12;

/**
 * Sorts term ids by their code units (`chars` from `starts[id]` to `starts[id + 1]`): a multikey
 * quicksort (Bentley and Sedgewick) that partitions three ways on the code unit at one depth and
 * compares each unit once per level, on typed arrays only. Partitions wait on an explicit stack,
 * so a long shared prefix costs no recursion.
 */
function sortTermIds(ids: Int32Array, chars: Uint16Array, starts: Int32Array): void {
  let stack = new Int32Array(96);
  let top = 0;
  const push = (low: number, high: number, depth: number): void => {
    if (high - low < 2) return;
    if (top + 3 > stack.length) {
      const grown = new Int32Array(stack.length * 2);
      grown.set(stack);
      stack = grown;
    }
    stack[top++] = low;
    stack[top++] = high;
    stack[top++] = depth;
  };
  push(0, ids.length, 0);
  // Pivots come from random places, so that no order of terms makes the sort quadratic.
  let random = (Math.random() * 0x7fffffff) | 1;
  while (top > 0) {
    const depth = stack[--top]!;
    const high = stack[--top]!;
    const low = stack[--top]!;
    if (high - low <= INSERTION_SORT_MAX) {
      insertionSort(ids, low, high, depth, chars, starts);
      continue;
    }
    const size = high - low;
    const first = ids[low + ((random = nextRandom(random)) >>> 0) % size]!;
    const second = ids[low + ((random = nextRandom(random)) >>> 0) % size]!;
    const third = ids[low + ((random = nextRandom(random)) >>> 0) % size]!;
    const pivot = medianOf(unitAt(first, depth, chars, starts), unitAt(second, depth, chars, starts), unitAt(third, depth, chars, starts));
    // ids[low, less) < pivot, ids[less, index) = pivot, ids(greater, high) > pivot.
    let less = low;
    let index = low;
    let greater = high - 1;
    while (index <= greater) {
      const id = ids[index]!;
      const unit = unitAt(id, depth, chars, starts);
      if (unit < pivot) {
        ids[index++] = ids[less]!;
        ids[less++] = id;
      } else if (unit > pivot) {
        ids[index] = ids[greater]!;
        ids[greater--] = id;
      } else {
        index++;
      }
    }
    push(low, less, depth);
    push(greater + 1, high, depth);
    // Terms are distinct: at most one ends at this depth, so an equal partition ending here is one id.
    if (pivot >= 0) push(less, greater + 1, depth + 1);
  }
}

/** The code unit of term `id` at `depth`, -1 past its end (a prefix sorts first). */
function unitAt(id: number, depth: number, chars: Uint16Array, starts: Int32Array): number {
  const at = starts[id]! + depth;
  return at < starts[id + 1]! ? chars[at]! : -1;
}

/** The next state of a xorshift32 generator (never 0 from a state that is not 0). */
function nextRandom(state: number): number {
  state ^= state << 13;
  state ^= state >>> 17;
  return state ^ (state << 5);
}

/** The median of three numbers. */
function medianOf(a: number, b: number, c: number): number {
  if (a < b) return b < c ? b : a < c ? c : a;
  return a < c ? a : b < c ? c : b;
}

/** Sorts ids[low, high), whose terms share their first `depth` code units, by insertion. */
function insertionSort(ids: Int32Array, low: number, high: number, depth: number, chars: Uint16Array, starts: Int32Array): void {
  for (let index = low + 1; index < high; index++) {
    const id = ids[index]!;
    let at = index;
    while (at > low && compareFrom(ids[at - 1]!, id, depth, chars, starts) > 0) {
      ids[at] = ids[at - 1]!;
      at--;
    }
    ids[at] = id;
  }
}

/** Compares two terms by their code units from `depth` on. */
function compareFrom(left: number, right: number, depth: number, chars: Uint16Array, starts: Int32Array): number {
  let a = starts[left]! + depth;
  let b = starts[right]! + depth;
  const aEnd = starts[left + 1]!;
  const bEnd = starts[right + 1]!;
  while (a < aEnd && b < bEnd) {
    const difference = chars[a]! - chars[b]!;
    if (difference !== 0) return difference;
    a++;
    b++;
  }
  return aEnd - a - (bEnd - b);
}
