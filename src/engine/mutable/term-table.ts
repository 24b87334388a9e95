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
  /** Code units of every term, back to back. */
  private chars = new Uint16Array(INITIAL_SLOTS * 8);
  private charsUsed = 0;

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
