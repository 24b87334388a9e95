/**
 * `include` / `exclude` of a `terms` aggregation: arrays of exact values (terms of a keyword field;
 * numbers, dates or booleans of the others, read like the field's values). A bucket is built for a
 * value that the include list holds (when there is one) and the exclude list does not. The regular
 * expression form (a string) and the `partition` form are refused with a 400: evaluating a client's
 * pattern needs a linear-time matcher, which the aggregation does not have yet.
 */
import { EngineError } from '../errors.ts';
import { describe } from '../query/dsl-reader.ts';
import type { ValueSource } from './aggregation-options.ts';
import { parseMissingValue } from './aggregation-options.ts';
import type { BucketKey } from './aggregation-partials.ts';

/** Most values an include or exclude list may hold (as ES `index.max_terms_count`). */
export const MAX_INCLUDE_VALUES = 65_536;

/** Which values of a terms aggregation get a bucket. */
export interface TermsValueFilter {
  include: ReadonlySet<BucketKey> | null;
  exclude: ReadonlySet<BucketKey> | null;
}

function parseList(value: unknown, which: 'include' | 'exclude', name: string, source: ValueSource, now: number): Set<BucketKey> | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') {
    if (source.kind === 'numeric') {
      throw new EngineError(
        'illegal_argument',
        `Aggregation [${name}] cannot support regular expression style include/exclude settings as they can only be applied to string fields. Use an array of values for include/exclude clauses`,
      );
    }
    throw new EngineError('illegal_argument', `[terms] [${which}] as a regular expression is not supported; list the exact terms as an array`);
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
  return (filter.include === null || filter.include.has(value)) && (filter.exclude === null || !filter.exclude.has(value));
}
