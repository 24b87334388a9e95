/**
 * A query's type and its Lucene-style text (`title:quick`, `+a -b`, `title:"a b"~1`), as
 * explanations and profiles show them. Types without a text form of their own show their type.
 */
import { DisMaxQuery, MatchAllQuery, MatchNoneQuery, ConstantScoreQuery, IdsQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { NumericRangeQuery, NumericSetQuery } from './column-queries.ts';
import { FuzzyQuery } from './fuzzy-query.ts';
import { AutomatonQuery, PrefixQuery, TermRangeQuery, TermSetQuery } from './multi-term-query.ts';
import { PhraseQuery } from './phrase-query.ts';
import type { Query } from './scorer.ts';
import { TermQuery } from './term-query.ts';

/** The query's type name, as ES profiles name Lucene's (`TermQuery`, `BooleanQuery`). */
export function queryType(query: Query): string {
  return query.constructor.name;
}

function boosted(text: string, boost: number): string {
  return boost === 1 ? text : `(${text})^${boost}`;
}

/** The query as text (bounded: long clause lists are cut). */
export function describeQuery(query: Query, depth = 0): string {
  if (depth > 8) return '...';
  if (query instanceof TermQuery) return boosted(`${query.field}:${query.term}`, query.boost);
  if (query instanceof PhraseQuery) return boosted(`${query.field}:"${query.terms.join(' ')}"${query.slop > 0 ? `~${query.slop}` : ''}`, query.boost);
  if (query instanceof PrefixQuery) return boosted(`${query.field}:${query.prefix}*`, query.boost);
  if (query instanceof AutomatonQuery) return boosted(`${query.field}:/${query.pattern}/`, query.boost);
  if (query instanceof FuzzyQuery) return boosted(`${query.field}:${query.term}~${query.maxEdits}`, query.boost);
  if (query instanceof TermSetQuery) return boosted(`${query.field}:(${query.terms.slice(0, 16).join(' ')}${query.terms.length > 16 ? ' ...' : ''})`, query.boost);
  if (query instanceof TermRangeQuery) return boosted(`${query.field}:${query.bounds.includeLower ? '[' : '{'}${query.bounds.lower ?? '*'} TO ${query.bounds.upper ?? '*'}${query.bounds.includeUpper ? ']' : '}'}`, query.boost);
  if (query instanceof NumericRangeQuery) return boosted(`${query.field}:[${query.min} TO ${query.max}]`, query.boost);
  if (query instanceof NumericSetQuery) return `${query.field}:{numeric values}`;
  if (query instanceof MatchAllQuery) return boosted('*:*', query.boost);
  if (query instanceof MatchNoneQuery) return 'MatchNoDocsQuery';
  if (query instanceof IdsQuery) return boosted(`_id:(${query.ids.slice(0, 16).join(' ')})`, query.boost);
  if (query instanceof ConstantScoreQuery) return boosted(`ConstantScore(${describeQuery(query.filter, depth + 1)})`, query.boost);
  if (query instanceof DisMaxQuery) return boosted(`(${query.queries.slice(0, 32).map((child) => describeQuery(child, depth + 1)).join(' | ')})~${query.tieBreaker}`, query.boost);
  if (query instanceof BooleanQuery) {
    const { must, should, filter, mustNot } = query.clauses;
    const parts = [
      ...must.map((child) => `+${describeQuery(child, depth + 1)}`),
      ...should.map((child) => describeQuery(child, depth + 1)),
      ...filter.map((child) => `#${describeQuery(child, depth + 1)}`),
      ...mustNot.map((child) => `-${describeQuery(child, depth + 1)}`),
    ];
    const text = (parts.length > 32 ? [...parts.slice(0, 32), '...'] : parts).join(' ');
    const minimum = query.minimumShouldMatch > 1 ? `~${query.minimumShouldMatch}` : '';
    return boosted(depth === 0 && minimum === '' ? text : `(${text})${minimum}`, query.boost);
  }
  return queryType(query);
}
