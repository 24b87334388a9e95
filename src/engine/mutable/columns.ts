import { FloatVector } from './growable.ts';
import type { InplaceColumn, KeywordColumn } from '../segment/leaf-reader.ts';

/** Numeric doc values of the mutable layer: one float slot per doc, multi-valued docs on the side. */
export class MutableNumericColumn implements InplaceColumn {
  readonly slots = new FloatVector(64);
  private readonly multi = new Map<number, number[]>();

  /** Records a doc's values (call once per doc, in doc order or for a fresh doc). */
  add(doc: number, values: readonly number[]): void {
    this.slots.ensure(doc + 1);
    if (values.length === 1) this.slots.data[doc] = values[0]!;
    else if (values.length > 1) this.multi.set(doc, [...values].sort((a, b) => a - b));
  }

  count(doc: number): number {
    const many = this.multi.get(doc);
    if (many) return many.length;
    return doc < this.slots.length && !Number.isNaN(this.slots.data[doc]!) ? 1 : 0;
  }

  value(doc: number, index: number): number {
    const many = this.multi.get(doc);
    return many ? many[index]! : this.slots.data[doc]!;
  }

  get(doc: number): number {
    return doc < this.slots.length ? this.slots.data[doc]! : NaN;
  }

  set(doc: number, value: number): void {
    this.slots.ensure(doc + 1);
    this.multi.delete(doc);
    this.slots.data[doc] = value;
  }
}

/**
 * Keyword doc values of the mutable layer. Values are kept as insertion-order term ids; the
 * sorted ordinal view is rebuilt lazily when a search asks for it after new terms arrived.
 */
export class MutableKeywordColumn {
  private readonly termIds = new Map<string, number>();
  private readonly termsByInsertion: string[] = [];
  private readonly docValues: (number[] | undefined)[] = [];
  private view: KeywordColumnView | null = null;

  /** Records a doc's values. */
  add(doc: number, values: readonly string[]): void {
    if (values.length === 0) return;
    const ids: number[] = [];
    for (const value of values) {
      let id = this.termIds.get(value);
      if (id === undefined) {
        id = this.termsByInsertion.length;
        this.termIds.set(value, id);
        this.termsByInsertion.push(value);
        this.view = null;
      }
      ids.push(id);
    }
    // Distinct ids in first-seen order, in linear time (a document may carry tens of thousands of values).
    this.docValues[doc] = ids.length > 1 ? [...new Set(ids)] : ids;
    if (this.view) this.view.invalidateDoc(doc);
  }

  /** Ordinal view over the terms seen so far. */
  column(): KeywordColumn {
    if (!this.view) this.view = new KeywordColumnView(this.termsByInsertion.slice(), this.termIds, this.docValues);
    return this.view;
  }
}

class KeywordColumnView implements KeywordColumn {
  readonly ordinalCount: number;
  private readonly sortedTerms: string[];
  private readonly rankOfId: Int32Array;
  private readonly sortedDocCache = new Map<number, number[]>();

  constructor(
    termsByInsertion: string[],
    private readonly termIds: Map<string, number>,
    private readonly docValues: (number[] | undefined)[],
  ) {
    this.sortedTerms = termsByInsertion.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.ordinalCount = this.sortedTerms.length;
    this.rankOfId = new Int32Array(termsByInsertion.length);
    for (let ordinal = 0; ordinal < this.sortedTerms.length; ordinal++) {
      this.rankOfId[termIds.get(this.sortedTerms[ordinal]!)!] = ordinal;
    }
  }

  invalidateDoc(doc: number): void {
    this.sortedDocCache.delete(doc);
  }

  term(ordinal: number): string {
    return this.sortedTerms[ordinal]!;
  }

  lookup(term: string): number {
    const id = this.termIds.get(term);
    return id === undefined || id >= this.rankOfId.length ? -1 : this.rankOfId[id]!;
  }

  count(doc: number): number {
    return this.docValues[doc]?.length ?? 0;
  }

  ordinal(doc: number, index: number): number {
    const ids = this.docValues[doc]!;
    if (ids.length === 1) return this.rankOfId[ids[0]!]!;
    let sorted = this.sortedDocCache.get(doc);
    if (!sorted) {
      sorted = ids.map((id) => this.rankOfId[id]!).sort((a, b) => a - b);
      this.sortedDocCache.set(doc, sorted);
    }
    return sorted[index]!;
  }
}
