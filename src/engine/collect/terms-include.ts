/**
 * `include` / `exclude` of a `terms` aggregation: arrays of exact values (terms of a keyword field;
 * numbers, dates or booleans of the others, read like the field's values), or for keyword fields a
 * Lucene regular expression matching the whole term, compiled to the bounded DFA of the `regexp`
 * query (one pass per term, never backtracking). A bucket is built for a value that the include
 * side accepts (when there is one) and the exclude side does not. The `partition` form is a 400.
 */
import { EngineError } from '../errors.ts';
import { compilePattern, type Dfa } from '../query/automaton.ts';
import { describe } from '../query/dsl-reader.ts';
import { MAX_REGEX_LENGTH } from '../query/parse-pattern-queries.ts';
import { parseRegexp, REGEXP_FLAGS } from '../query/regexp-syntax.ts';
import type { ValueSource } from './aggregation-options.ts';
import { parseMissingValue } from './aggregation-options.ts';
import type { BucketKey } from './aggregation-partials.ts';

/** Most values an include or exclude list may hold (as ES `index.max_terms_count`). */
export const MAX_INCLUDE_VALUES = 65_536;

/** Which values of a terms aggregation get a bucket. */
export interface TermsValueFilter {
  include: ReadonlySet<BucketKey> | Dfa | null;
  exclude: ReadonlySet<BucketKey> | Dfa | null;
}

function parseList(value: unknown, which: 'include' | 'exclude', name: string, source: ValueSource, now: number): Set<BucketKey> | Dfa | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') {
    if (source.kind === 'numeric') {
      throw new EngineError(
        'illegal_argument',
        `Aggregation [${name}] cannot support regular expression style include/exclude settings as they can only be applied to string fields. Use an array of values for include/exclude clauses`,
      );
    }
    if (value.length > MAX_REGEX_LENGTH) {
      throw new EngineError(
        'illegal_argument',
        `The length of regex [${value.length}] used in the Regexp Query request has exceeded the allowed maximum of [${MAX_REGEX_LENGTH}]. This maximum can be set by changing the [index.max_regex_length] index level setting.`,
      );
    }
    return compilePattern(parseRegexp(value, REGEXP_FLAGS.ALL, false));
  }
  if (!Array.isArray(value)) {
    if (which === 'include' && typeof value === 'object') {
      throw new EngineError('illegal_argument', '[terms] [include] partitions (partition, num_partitions) are not supported');
    }
    throw new EngineError('parsing', `[terms] [${which}] must be an array of values, got ${describe(value)}`);
  }
  if (value.length > MAX_INCLUDE_VALUES) {
    throw new EngineError('illegal_argument', `[terms] [${which}] lists ${value.length} values, at most ${MAX_INCLUDE_VALUES} are allowed`);
  }
  const values = new Set<BucketKey>();
  for (const entry of value) {
    if (entry === null || typeof entry === 'object') throw new EngineError('parsing', `[terms] [${which}] values must be scalars, got ${describe(entry)}`);
    values.add(parseMissingValue(entry, source, 'terms', now)!);
  }
  return values;
}

/** Parses `include` and `exclude`; null when neither is given. */
export function parseTermsValueFilter(options: Record<string, unknown>, name: string, source: ValueSource, now: number): TermsValueFilter | null {
  const include = parseList(options.include, 'include', name, source, now);
  const exclude = parseList(options.exclude, 'exclude', name, source, now);
  return include === null && exclude === null ? null : { include, exclude };
}

/** Whether a value gets a bucket. */
export function acceptsValue(filter: TermsValueFilter, value: BucketKey): boolean {
  return (filter.include === null || accepts(filter.include, value)) && (filter.exclude === null || !accepts(filter.exclude, value));
}

function accepts(side: ReadonlySet<BucketKey> | Dfa, value: BucketKey): boolean {
  return side instanceof Set ? side.has(value) : (side as Dfa).matches(String(value));
}
