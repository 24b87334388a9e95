/** Latency statistics and human-readable figures for the bench tables. */

/** Nearest-rank percentile (`fraction` in (0, 1]) of unsorted samples; NaN when empty. */
export function percentile(samples: readonly number[], fraction: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.max(1, Math.ceil(fraction * sorted.length));
  return sorted[rank - 1] as number;
}

/** Milliseconds with precision that suits their size (`0.042 ms`, `12.3 ms`, `1 234 ms`). */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** Byte counts in MB (10^6) with one decimal. */
export function formatMegabytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** A rate with thousands separators and no decimals beyond what matters. */
export function formatRate(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })} ${unit}`;
}

/** A ratio such as `0.12×`, or `n/a`. */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return 'n/a';
  return ratio < 0.1 ? `${ratio.toFixed(3)}×` : `${ratio.toFixed(2)}×`;
}
