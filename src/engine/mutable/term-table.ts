/**
 * Interns the terms of one field as dense ids 0, 1, 2, … in first-seen order. An open-addressing
 * table hashes UTF-16 code units, so a term can be looked up as a span of a larger string without
 * slicing it: only a new term becomes a string of its own.
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

function equalsSpan(term: string, text: string, start: number, end: number): boolean {
  if (term.length !== end - start) return false;
  for (let index = 0; index < term.length; index++) {
    if (term.charCodeAt(index) !== text.charCodeAt(start + index)) return false;
  }
  return true;
}

/** See the module comment. */
export class TermTable {
  /** Terms by id. */
  readonly terms: string[] = [];
  private hashes = new Int32Array(INITIAL_SLOTS / 2);
  /** Id + 1 per slot, 0 for an empty slot. */
  private slots = new Int32Array(INITIAL_SLOTS);
  private mask = INITIAL_SLOTS - 1;

  /** Number of terms. */
  get size(): number {
    return this.terms.length;
  }

  /** Id of the term `text.slice(start, end)`, adding it when new. */
  internSpan(text: string, start: number, end: number): number {
    const hash = hashSpan(text, start, end);
    const slots = this.slots;
    const mask = this.mask;
    let slot = hash & mask;
    for (;;) {
      const entry = slots[slot]!;
      if (entry === 0) return this.add(ownedString(text.slice(start, end)), hash, slot);
      const id = entry - 1;
      if (this.hashes[id] === hash && equalsSpan(this.terms[id]!, text, start, end)) return id;
      slot = (slot + 1) & mask;
    }
  }

  /** Id of `term`, adding it when new. */
  intern(term: string): number {
    return this.internSpan(term, 0, term.length);
  }

  /** Id of `term`, or -1 when the field does not have it. */
  lookup(term: string): number {
    const hash = hashSpan(term, 0, term.length);
    let slot = hash & this.mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return -1;
      const id = entry - 1;
      if (this.hashes[id] === hash && this.terms[id] === term) return id;
      slot = (slot + 1) & this.mask;
    }
  }

  private add(term: string, hash: number, slot: number): number {
    const id = this.terms.length;
    this.terms.push(term);
    if (id === this.hashes.length) {
      const hashes = new Int32Array(id * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
    }
    this.hashes[id] = hash;
    this.slots[slot] = id + 1;
    // Load factor at most 1/2.
    if ((id + 1) * 2 > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let id = 0; id < this.terms.length; id++) {
      let slot = this.hashes[id]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
