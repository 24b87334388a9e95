import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';

/** Anything positioned on a doc that can skip forward: scorers and postings cursors. */
export interface DocIterator {
  readonly doc: number;
  advance(target: number): number;
}

/**
 * Leapfrog intersection: from `candidate` (the lead's current doc; members sorted by cost, lead
 * first), advances members until all sit on the same doc and returns it, or NO_MORE_DOCS.
 */
export function alignConjunction(members: readonly DocIterator[], candidate: number): number {
  const lead = members[0]!;
  let doc = candidate;
  outer: while (doc !== NO_MORE_DOCS) {
    for (let i = 1; i < members.length; i++) {
      const other = members[i]!;
      let otherDoc = other.doc;
      if (otherDoc < doc) otherDoc = other.advance(doc);
      if (otherDoc > doc) {
        if (otherDoc === NO_MORE_DOCS) return NO_MORE_DOCS;
        doc = lead.advance(otherDoc);
        continue outer;
      }
    }
    return doc;
  }
  return NO_MORE_DOCS;
}
