/** Size of a segment as the merge policy sees it. */
export interface MergeCandidate {
  name: string;
  bytes: number;
  liveDocs: number;
  maxDoc: number;
}

/** Options of the tiered policy. */
export interface TieredMergeOptions {
  segmentsPerTier: number;
  maxSegmentBytes: number;
}

/** Bytes below which all segments count as one tier (avoids many tiny tiers). */
const FLOOR_BYTES = 2 * 1024 * 1024;

/**
 * Tiered merge policy: segments are grouped in tiers of size (powers of `segmentsPerTier` above a
 * floor); when a tier holds `segmentsPerTier` segments, its smallest ones are merged into one
 * segment of the next tier. Returns the names to merge, or null. Deletions count as waste: a
 * segment with more than half its docs deleted is rewritten on its own.
 */
export function findTieredMerge(segments: readonly MergeCandidate[], options: TieredMergeOptions): string[] | null {
  const eligible = segments.filter((segment) => segment.bytes < options.maxSegmentBytes);
  const tiers = new Map<number, MergeCandidate[]>();
  for (const segment of eligible) {
    const tier = segment.bytes <= FLOOR_BYTES ? 0 : Math.floor(Math.log(segment.bytes / FLOOR_BYTES) / Math.log(options.segmentsPerTier)) + 1;
    const list = tiers.get(tier) ?? [];
    list.push(segment);
    tiers.set(tier, list);
  }
  for (const tier of [...tiers.keys()].sort((a, b) => a - b)) {
    const list = tiers.get(tier)!;
    if (list.length >= options.segmentsPerTier) {
      list.sort((a, b) => a.bytes - b.bytes);
      return list.slice(0, options.segmentsPerTier).map((segment) => segment.name);
    }
  }
  const wasteful = eligible.find((segment) => segment.maxDoc > 0 && segment.liveDocs * 2 < segment.maxDoc);
  return wasteful ? [wasteful.name] : null;
}

/** Forced merge plan: all segments into at most `maxSegments`, smallest merged first. */
export function planForceMerge(segments: readonly MergeCandidate[], maxSegments: number): string[][] {
  const hasDeletes = segments.some((segment) => segment.liveDocs < segment.maxDoc);
  if (segments.length <= maxSegments && !hasDeletes) return [];
  if (segments.length <= maxSegments) {
    return segments.filter((segment) => segment.liveDocs < segment.maxDoc).map((segment) => [segment.name]);
  }
  const sorted = [...segments].sort((a, b) => a.bytes - b.bytes);
  const mergeCount = sorted.length - maxSegments + 1;
  const groups = [sorted.slice(0, mergeCount).map((segment) => segment.name)];
  for (const segment of sorted.slice(mergeCount)) {
    if (segment.liveDocs < segment.maxDoc) groups.push([segment.name]);
  }
  return groups;
}
