/**
 * `extended_stats` values from a merged partial (count, sum, sum of squares, min, max), computed
 * as Elasticsearch's InternalExtendedStats does: population variance `sumSq/n − avg²`, sampling
 * variance `(sumSq − sum²/n)/(n − 1)`, both clamped at 0, standard deviations their roots, and
 * `std_deviation_bounds` at `avg ± sigma · std_deviation`.
 */
import type { ExtendedStatsPartial } from './aggregation-partials.ts';
import { formatValue } from './value-format.ts';

/** The derived statistics of an extended_stats partial (null where ES writes null). */
export interface ExtendedStatsValues {
  avg: number | null;
  sum_of_squares: number | null;
  variance: number | null;
  variance_population: number | null;
  variance_sampling: number | null;
  std_deviation: number | null;
  std_deviation_population: number | null;
  std_deviation_sampling: number | null;
}

/** The derived statistics of a partial. */
export function extendedStatsValues(partial: ExtendedStatsPartial): ExtendedStatsValues {
  const { count, sum, sumOfSquares } = partial;
  if (count === 0) {
    return {
      avg: null,
      sum_of_squares: null,
      variance: null,
      variance_population: null,
      variance_sampling: null,
      std_deviation: null,
      std_deviation_population: null,
      std_deviation_sampling: null,
    };
  }
  const population = Math.max(0, (sumOfSquares - (sum * sum) / count) / count);
  // One value has no sampling variance: ES computes 0/0 (NaN); it is written null here.
  const sampling = count < 2 ? null : Math.max(0, (sumOfSquares - (sum * sum) / count) / (count - 1));
  return {
    avg: sum / count,
    sum_of_squares: sumOfSquares,
    variance: population,
    variance_population: population,
    variance_sampling: sampling,
    std_deviation: Math.sqrt(population),
    std_deviation_population: Math.sqrt(population),
    std_deviation_sampling: sampling === null ? null : Math.sqrt(sampling),
  };
}

/** One stat of a partial by its ES name (for bucket order paths such as `stats.variance`). */
export function extendedStatValue(partial: ExtendedStatsPartial, stat: string): number | null {
  switch (stat) {
    case 'count':
      return partial.count;
    case 'sum':
      return partial.sum;
    case 'min':
      return partial.min;
    case 'max':
      return partial.max;
    default: {
      const values = extendedStatsValues(partial);
      return Object.hasOwn(values, stat) ? values[stat as keyof ExtendedStatsValues] : null;
    }
  }
}

/** Renders an extended_stats partial in the ES response shape. */
export function renderExtendedStats(partial: ExtendedStatsPartial, sigma: number): Record<string, unknown> {
  const values = extendedStatsValues(partial);
  const bound = (deviation: number | null, sign: number): number | null =>
    deviation === null || values.avg === null ? null : values.avg + sign * sigma * deviation;
  const rendered: Record<string, unknown> = {
    count: partial.count,
    min: partial.min,
    max: partial.max,
    avg: values.avg,
    sum: partial.sum,
    sum_of_squares: values.sum_of_squares,
    variance: values.variance,
    variance_population: values.variance_population,
    variance_sampling: values.variance_sampling,
    std_deviation: values.std_deviation,
    std_deviation_population: values.std_deviation_population,
    std_deviation_sampling: values.std_deviation_sampling,
    std_deviation_bounds: {
      upper: bound(values.std_deviation, 1),
      lower: bound(values.std_deviation, -1),
      upper_population: bound(values.std_deviation_population, 1),
      lower_population: bound(values.std_deviation_population, -1),
      upper_sampling: bound(values.std_deviation_sampling, 1),
      lower_sampling: bound(values.std_deviation_sampling, -1),
    },
  };
  if (partial.format === 'date') {
    for (const name of ['min', 'max', 'avg'] as const) {
      const value = rendered[name] as number | null;
      if (value !== null) rendered[`${name}_as_string`] = formatValue(value, 'date');
    }
  }
  return rendered;
}
