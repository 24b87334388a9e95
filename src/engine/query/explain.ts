/**
 * Explanations of a document's score (ES `explain`): a tree of `{value, description, details}`
 * with the figures the scorers used. A term shows its BM25 computation (boost with ES's k1 + 1
 * factor, idf from n and N, tf from freq, k1, b, dl and avgdl, with the blended document frequency
 * of a fuzzy expansion); a phrase shows its frequency scored with the sum of its terms' idfs; a
 * `bool` sums its scoring clauses, a `dis_max` takes the best plus `tie_breaker` times the others,
 * a fuzzy term explains its expansions; any other query shows its text and the score its own
 * scorer gives the document. Every value is computed by the engine's
 * scorers, so the root equals the hit's score.
 */
import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { decodeNorm } from '../segment/norms.ts';
import { DisMaxQuery } from './basic-queries.ts';
import { BM25_B, BM25_K1, Bm25Scoring, bm25Idf } from './bm25.ts';
import { BooleanQuery } from './boolean-query.ts';
import { FuzzyQuery } from './fuzzy-query.ts';
import { PhraseQuery, PhraseScorer } from './phrase-query.ts';
import { describeQuery } from './query-description.ts';
import type { Query } from './scorer.ts';
import { SearchContext } from './search-context.ts';
import { TermQuery } from './term-query.ts';

/** One node of an explanation. */
export interface Explanation {
  value: number;
  description: string;
  details: Explanation[];
}

/** Deepest query nesting explained in detail (deeper nodes show their score only). */
const MAX_EXPLAIN_DEPTH = 32;

/** The explanation of `doc` of leaf `leafIndex` for `query`; null when the document does not match. */
export function explainDocument(query: Query, leaves: readonly LeafReader[], fields: ReadonlyMap<string, FlatField>, leafIndex: number, doc: number): Explanation | null {
  const context = new SearchContext(leaves, fields);
  return explain(query, context, 1, leafIndex, doc, 0);
}

/** The score the query's own scorer gives the document (null: no match). */
function realScore(query: Query, context: SearchContext, boost: number, leafIndex: number, doc: number): number | null {
  const scorer = query.createWeight(context, true, boost).scorer(context.leaves[leafIndex]!, leafIndex);
  if (scorer === null || scorer.advance(doc) !== doc) return null;
  return scorer.score();
}

function explain(query: Query, context: SearchContext, boost: number, leafIndex: number, doc: number, depth: number): Explanation | null {
  if (query instanceof TermQuery) return explainTerm(query, context, boost, leafIndex, doc);
  if (query instanceof PhraseQuery) return explainPhrase(query, context, boost, leafIndex, doc);
  if (query instanceof FuzzyQuery && depth < MAX_EXPLAIN_DEPTH) return explain(query.rewrite(context), context, boost, leafIndex, doc, depth + 1);
  const value = realScore(query, context, boost, leafIndex, doc);
  if (value === null) return null;
  const children = (queries: readonly Query[], childBoost: number): Explanation[] =>
    depth >= MAX_EXPLAIN_DEPTH ? [] : queries.flatMap((child) => explain(child, context, childBoost, leafIndex, doc, depth + 1) ?? []);
  if (query instanceof BooleanQuery) {
    const { must, should, filter } = query.clauses;
    const details = children([...must, ...should], boost * query.boost);
    for (const clause of filter) details.push({ value: 0, description: `match on required clause, no score: ${describeQuery(clause, 1)}`, details: [] });
    return { value, description: 'sum of:', details };
  }
  if (query instanceof DisMaxQuery) {
    return { value, description: `max plus ${query.tieBreaker} times others of:`, details: children(query.queries, boost * query.boost) };
  }
  return { value, description: describeQuery(query), details: [] };
}

/** BM25 of one term in one document, figure by figure. */
function explainTerm(query: TermQuery, context: SearchContext, boost: number, leafIndex: number, doc: number): Explanation | null {
  const leaf = context.leaves[leafIndex]!;
  const cursor = leaf.postings(query.field, query.term);
  if (cursor === null || cursor.advance(doc) !== doc) return null;
  const lengthNormalised = context.field(query.field)?.type === 'text';
  const docFreq = query.blendedDocFreq ?? context.docFreq(query.field, query.term);
  const docCount = Math.max(context.fieldStats(query.field).docCount, docFreq);
  const idf = termIdf(docFreq, docCount, query.blendedDocFreq === null ? 'n, number of documents containing term' : 'n, number of documents containing term (the largest among the fuzzy expansions)');
  const scoring = Bm25Scoring.forField(context, query.field, idf.value, boost * query.boost, lengthNormalised);
  return bm25Explanation(context, leafIndex, doc, `${query.field}:${query.term}`, query.field, lengthNormalised, scoring, boost * query.boost, idf, cursor.freq(), 'occurrences of term within document');
}

/** BM25 of an exact or sloppy phrase in one document: its frequency scored with the sum of its terms' idfs. */
function explainPhrase(query: PhraseQuery, context: SearchContext, boost: number, leafIndex: number, doc: number): Explanation | null {
  const weightBoost = boost * query.boost;
  const scorer = query.createWeight(context, true, boost).scorer(context.leaves[leafIndex]!, leafIndex);
  if (!(scorer instanceof PhraseScorer) || scorer.advance(doc) !== doc) return null;
  const docCount = context.fieldStats(query.field).docCount;
  const terms = query.terms.map((term) => {
    const docFreq = context.docFreq(query.field, term);
    return termIdf(docFreq, Math.max(docCount, docFreq), `n, number of documents containing term [${term}]`);
  });
  const idf: Explanation = { value: terms.reduce((sum, term) => sum + term.value, 0), description: 'idf, sum of:', details: terms };
  const scoring = Bm25Scoring.forField(context, query.field, idf.value, weightBoost, true);
  const text = `${query.field}:"${query.terms.join(' ')}"${query.slop > 0 ? `~${query.slop}` : ''}`;
  const explanation = bm25Explanation(context, leafIndex, doc, text, query.field, true, scoring, weightBoost, idf, scorer.freq, 'phrase frequency within document');
  explanation.value = scorer.score();
  explanation.details[0]!.value = explanation.value;
  return explanation;
}

/** The idf of a term with `docFreq` of `docCount` documents, figure by figure. */
function termIdf(docFreq: number, docCount: number, docFreqDescription: string): Explanation {
  return {
    value: bm25Idf(docFreq, docCount),
    description: 'idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:',
    details: [
      { value: docFreq, description: docFreqDescription, details: [] },
      { value: docCount, description: 'N, total number of documents with field', details: [] },
    ],
  };
}

/** The BM25 breakdown (boost, idf, tf) of `freq` occurrences of `what` in the document. */
function bm25Explanation(
  context: SearchContext,
  leafIndex: number,
  doc: number,
  what: string,
  field: string,
  lengthNormalised: boolean,
  scoring: Bm25Scoring,
  boost: number,
  idf: Explanation,
  freq: number,
  freqDescription: string,
): Explanation {
  const leaf = context.leaves[leafIndex]!;
  const stats = context.fieldStats(field);
  const avgdl = stats.docCount > 0 && stats.sumTotalTermFreq > 0 ? stats.sumTotalTermFreq / stats.docCount : 1;
  const norm = lengthNormalised ? leaf.norm(field, doc) : 0;
  const dl = lengthNormalised ? decodeNorm(norm) : 1;
  const score = scoring.score(freq, norm);
  const tf = freq / (freq + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / avgdl));
  const leafDoc = context.docBases[leafIndex]! + doc;
  return {
    value: score,
    description: `weight(${what} in ${leafDoc}) [PerFieldSimilarity], result of:`,
    details: [
      {
        value: score,
        description: `score(freq=${freq}), computed as boost * idf * tf from:`,
        details: [
          { value: boost * (BM25_K1 + 1), description: 'boost', details: [] },
          idf,
          {
            value: tf,
            description: 'tf, computed as freq / (freq + k1 * (1 - b + b * dl / avgdl)) from:',
            details: [
              { value: freq, description: `freq, ${freqDescription}`, details: [] },
              { value: BM25_K1, description: 'k1, term saturation parameter', details: [] },
              { value: BM25_B, description: 'b, length normalization parameter', details: [] },
              { value: dl, description: 'dl, length of field', details: [] },
              { value: avgdl, description: 'avgdl, average length of field', details: [] },
            ],
          },
        ],
      },
    ],
  };
}
