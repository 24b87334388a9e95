/**
 * `case_insensitive: true` of `term` and `prefix` (ES 7.10+; `terms` has no such option, as in
 * ES): the value becomes an automaton (automaton.ts) accepting every case variant of each of its
 * characters, then any run for a prefix, run over the field's terms like `wildcard`; it scores
 * the boost (constant score), as ES's case-insensitive term query does. A flattened key's prefix
 * stays exact. Only fields with a term dictionary (text and keyword) take it.
 */
import type { FlatField } from '../mapping/mapping.ts';
import { compilePattern, type PatternNode } from './automaton.ts';
import { describe, dslError, readBoolean, type DslObject } from './dsl-reader.ts';
import { isInvertedField } from './field-queries.ts';
import { AutomatonQuery } from './multi-term-query.ts';
import { parseWildcard } from './regexp-syntax.ts';
import { assertSearchable } from './typed-values.ts';
import type { Query } from './scorer.ts';

/** The `case_insensitive` option (default false). */
export function readCaseInsensitive(options: DslObject, owner: string): boolean {
  return options.case_insensitive === undefined ? false : readBoolean(options.case_insensitive, 'case_insensitive', owner);
}

/** `text` as a wildcard pattern matching itself literally. */
function literalPattern(text: string): string {
  return text.replace(/[\\*?]/g, (character) => `\\${character}`);
}

/** Docs whose `field` holds `value` (or, with `prefix`, a term starting with it) in any letter case. */
export function caseInsensitiveQuery(field: FlatField, keyPrefix: string, value: unknown, prefix: boolean, boost: number, owner: string): Query {
  // A binary field with doc values holds its text in a keyword column, but is never searchable.
  if (field.type === 'binary') assertSearchable(field);
  if (!isInvertedField(field)) {
    throw dslError(`[${owner}] field [${field.path}] which is of type [${field.type}] does not support case insensitive term queries`);
  }
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw dslError(`[${owner}] value of field [${field.path}] must be a string, number or boolean, got ${describe(value)}`);
  }
  const text = String(value);
  const parts: PatternNode[] = [];
  if (keyPrefix !== '') parts.push(parseWildcard(literalPattern(keyPrefix), false));
  parts.push(parseWildcard(`${literalPattern(text)}${prefix ? '*' : ''}`, true));
  return new AutomatonQuery(field.path, compilePattern({ kind: 'concat', parts }), text, boost);
}
