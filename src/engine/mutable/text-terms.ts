import { analyzeTermPositions, receiveTerms, type TermReceiver } from '../analysis/analyzer.ts';
import type { FlatField } from '../mapping/mapping.ts';
import type { TermTable } from './term-table.ts';

/** Gap inserted between the values of a multi-valued text field (ES `position_increment_gap`). */
export const POSITION_INCREMENT_GAP = 100;

/** What a text field's values index: each term's positions, and the field length in tokens. */
export interface TextTerms {
  termPositions: Map<string, number[]>;
  tokenCount: number;
}

/** Analyzes the values of a text field as one document field (positions run on across values). */
export function analyzeTextValues(values: readonly string[], analyzer: FlatField['analyzer']): TextTerms {
  const termPositions = new Map<string, number[]>();
  let tokenCount = 0;
  let base = 0;
  for (const value of values) {
    const { terms, positions } = analyzeTermPositions(analyzer, value);
    let last = -1;
    for (let index = 0; index < terms.length; index++) {
      const term = terms[index]!;
      const position = base + positions[index]!;
      last = position;
      const list = termPositions.get(term);
      if (list) list.push(position);
      else termPositions.set(term, [position]);
    }
    tokenCount += terms.length;
    base = (last >= 0 ? last : base) + POSITION_INCREMENT_GAP;
  }
  return { termPositions, tokenCount };
}

/** A text field's tokens as term ids of one table and absolute positions (reused buffers). */
export class TokenBuffer implements TermReceiver {
  ids = new Int32Array(1024);
  positions = new Int32Array(1024);
  count = 0;
  private table: TermTable | null = null;
  private base = 0;
  private last = -1;

  /**
   * Analyzes the values of a text field as one document field (positions run on across values,
   * as `analyzeTextValues` numbers them), interning terms in `table`.
   */
  collect(values: readonly string[], analyzer: FlatField['analyzer'], table: TermTable): void {
    this.table = table;
    this.count = 0;
    this.base = 0;
    for (const value of values) {
      this.last = -1;
      receiveTerms(analyzer, value, this);
      this.base = (this.last >= 0 ? this.last : this.base) + POSITION_INCREMENT_GAP;
    }
    this.table = null;
  }

  /** Collects keyword values as tokens (positions all 0). */
  collectKeywords(values: readonly string[], table: TermTable): void {
    this.count = 0;
    for (const value of values) this.push(table.intern(value), 0);
  }

  span(text: string, start: number, end: number, position: number): void {
    this.push(this.table!.internSpan(text, start, end), this.base + position);
  }

  term(term: string, position: number): void {
    this.push(this.table!.intern(term), this.base + position);
  }

  private push(id: number, position: number): void {
    const count = this.count;
    if (count === this.ids.length) this.grow();
    this.ids[count] = id;
    this.positions[count] = position;
    this.last = position;
    this.count = count + 1;
  }

  private grow(): void {
    const ids = new Int32Array(this.ids.length * 2);
    ids.set(this.ids);
    this.ids = ids;
    const positions = new Int32Array(this.positions.length * 2);
    positions.set(this.positions);
    this.positions = positions;
  }
}
