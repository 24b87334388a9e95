/**
 * ES `typed_keys`: with it, every aggregation name in a response is written `<type>#<name>` so
 * that typed clients know how to parse the result without the request. The type is the one ES
 * gives the *result*: `terms` is `sterms` (keywords), `lterms` (integers, dates, booleans) or
 * `dterms` (fractional numbers); the others keep their request type.
 */
import type { AggregationPartial } from './aggregation-partials.ts';
import type { AggregationSpec } from './aggregation-spec.ts';

/** The `typed_keys` prefix of an aggregation's result (without the `#`). */
export function typedKeyPrefix(spec: AggregationSpec, partial: AggregationPartial): string {
  switch (spec.type) {
    case 'terms':
      return partial.type === 'terms' ? termsResultType(partial) : 'sterms';
    case 'range':
      return spec.requestedAs;
    case 'significant_terms':
      return partial.type === 'significant_terms' && partial.format !== 'string' && partial.format !== 'ip' ? 'siglterms' : 'sigsterms';
    case 'percentiles':
      return spec.hdrDigits === null ? 'tdigest_percentiles' : 'hdr_percentiles';
    case 'percentile_ranks':
      return spec.hdrDigits === null ? 'tdigest_percentile_ranks' : 'hdr_percentile_ranks';
    default:
      return spec.type;
  }
}

/**
 * `sterms` for keyword terms and for an unmapped field (as ES; also numeric terms without a bucket);
 * numeric terms are `lterms` unless a key has a fraction. A double field whose keys are all whole numbers is written `lterms`: the
 * merged partial knows the values, not the field's numeric type.
 */
function termsResultType(partial: Extract<AggregationPartial, { type: 'terms' }>): string {
  if (partial.format === 'date' || partial.format === 'boolean') return 'lterms';
  if (partial.format === 'string' || partial.buckets.length === 0) return 'sterms';
  return partial.buckets.every((bucket) => typeof bucket.key === 'number' && Number.isInteger(bucket.key)) ? 'lterms' : 'dterms';
}
