/**
 * DSL parser of `multi_match`: one query text over several fields, by type — `best_fields` (dis_max
 * of per-field `match`), `most_fields` (their sum), `phrase` and `phrase_prefix` (dis_max of
 * per-field phrases), `bool_prefix` (sum of per-field `match_bool_prefix`) and `cross_fields`
 * (term-centric over the fields blended, cross-fields-query.ts).
 */
import type { FlatField } from '../mapping/mapping.ts';
import { DisMaxQuery, MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { crossFieldsQuery } from './cross-fields-query.ts';
import { checkKeys, dslError, readEnum, readInteger, readNumber, readScalarText, type DslObject } from './dsl-reader.ts';
import { boolPrefixQuery, matchQuery, phrasePrefixQuery, phraseQuery } from './field-queries.ts';
import { MATCH_KEYS, readMatchOptions, readMaxExpansions, resolveFieldList } from './parse-full-text.ts';
import type { Query } from './scorer.ts';

/** The types of `multi_match`. */
export const MULTI_MATCH_TYPES = ['best_fields', 'most_fields', 'phrase', 'cross_fields', 'phrase_prefix', 'bool_prefix'] as const;

/** `{multi_match: {query, fields, type, operator, minimum_should_match, tie_breaker, slop, max_expansions, ...}}`. */
export function parseMultiMatch(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const owner = 'multi_match';
  checkKeys(body, [...MATCH_KEYS, 'fields', 'type', 'tie_breaker', 'slop', 'cutoff_frequency'], owner);
  if (body.query === undefined) throw dslError('[multi_match] requires query value');
  const text = readScalarText(body.query, 'query', owner);
  const type = body.type === undefined ? 'best_fields' : readEnum(body.type, MULTI_MATCH_TYPES, 'type', owner);
  if (body.slop !== undefined && type === 'bool_prefix') throw dslError(`[${owner}] [slop] not allowed for type [${type}]`);
  if (body.cutoff_frequency !== undefined && type === 'bool_prefix') throw dslError(`[${owner}] [cutoff_frequency] not allowed for type [${type}]`);
  if (body.fuzziness !== undefined && body.fuzziness !== null && (type === 'phrase' || type === 'phrase_prefix' || type === 'cross_fields')) {
    throw dslError(`[multi_match] Fuzziness not allowed for type [${type}]`);
  }
  if (body.cutoff_frequency !== undefined) readNumber(body.cutoff_frequency, 'cutoff_frequency', owner);
  const tieBreaker = body.tie_breaker === undefined ? 0 : readNumber(body.tie_breaker, 'tie_breaker', owner);
  const slop = body.slop === undefined ? 0 : readInteger(body.slop, 'slop', owner);
  const maxExpansions = readMaxExpansions(body, owner);
  const options = readMatchOptions(body, owner);
  const targets = resolveFieldList(body.fields, fields, owner);
  if (type === 'cross_fields') return crossFieldsQuery(targets, text, options, tieBreaker, owner, now);
  const queries = targets.fields.map((field, index) => {
    const fieldOptions = { ...options, boost: targets.boosts[index]! };
    switch (type) {
      case 'phrase':
        return phraseQuery(field, text, slop, fieldOptions, owner, now);
      case 'phrase_prefix':
        return phrasePrefixQuery(field, text, slop, maxExpansions, fieldOptions, owner, now);
      case 'bool_prefix':
        return boolPrefixQuery(field, text, fieldOptions, owner, now);
      default:
        return matchQuery(field, text, fieldOptions, owner, now);
    }
  });
  if (queries.length === 0) return new MatchNoneQuery();
  const summed = type === 'most_fields' || type === 'bool_prefix';
  if (summed || queries.length === 1) return new BooleanQuery({ must: [], should: queries, filter: [], mustNot: [] }, 1, options.boost);
  return new DisMaxQuery(queries, tieBreaker, options.boost);
}
