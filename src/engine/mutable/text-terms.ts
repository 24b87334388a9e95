import { analyzeTermPositions } from '../analysis/analyzer.ts';
import type { FlatField } from '../mapping/mapping.ts';

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
