/**
 * Range suite: range filters on a numeric field answered from the range index (`columns.range`)
 * against a full scan of the column, on the same segment in the same run. A shard indexes
 * `--range-docs` documents (default 1M) with one `long` field of uniformly random values, epochs
 * and merges to one segment; the segment is then also opened as a format 1 segment (a copy
 * without its range index), which answers the same queries by scanning the column. Each query is
 * `{bool: {filter: {range}}}` with every hit counted (`track_total_hits: true`) and the top 10
 * kept, run through the engine's query phase on that one leaf.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Mapping } from '../src/engine/mapping/mapping.ts';
import { flattenMapping } from '../src/engine/mapping/mapping.ts';
import { executeQuery } from '../src/engine/query/execute.ts';
import type { LeafReader } from '../src/engine/segment/leaf-reader.ts';
import { SegmentFileName } from '../src/engine/segment/segment-file.ts';
import { SegmentReader } from '../src/engine/segment/segment-reader.ts';
import { DEFAULT_ENGINE_SETTINGS, Shard } from '../src/engine/shard/shard.ts';
import { Prng } from './corpora/prng.ts';
import { formatMs, formatRatio, percentile } from './report/stats.ts';
import { renderTable, verdict } from './report/table.ts';

/** Knobs of the range suite. */
export interface RangeSuiteOptions {
  /** Documents in the segment. */
  docs: number;
  /** Warm-up per selectivity and path, ms. */
  warmupMs: number;
  /** Timed queries per selectivity and path. */
  queries: number;
}

const FIELD = 'amount';
const VALUE_SPAN = 1_000_000_000;
const MAPPING: Mapping = { properties: { [FIELD]: { type: 'long' } } };
const SELECTIVITIES = [0.001, 0.01, 0.1];
const TARGET_SELECTIVITY = 0.01;
const TARGET_RATIO = 0.2;
const BATCH = 10_000;

/** Latencies of one path at one selectivity. */
interface PathFigures {
  p50: number;
  p99: number;
  hits: number;
}

function loadLine(): string {
  return os.loadavg().map((value) => value.toFixed(2)).join(' / ');
}

/** Writes the documents, epochs and merges to one segment; returns the shard. */
async function buildShard(dir: string, docs: number): Promise<Shard> {
  const shard = await Shard.open({ dir, uuid: 'bench-ranges', mapping: MAPPING, settings: { ...DEFAULT_ENGINE_SETTINGS, changesRetentionMs: 0 } });
  const random = new Prng(16);
  for (let start = 0; start < docs; start += BATCH) {
    const ops = [];
    for (let n = start; n < Math.min(docs, start + BATCH); n++) {
      ops.push({ kind: 'index' as const, id: String(n), source: { [FIELD]: random.below(VALUE_SPAN) } });
    }
    await shard.writeBatch(ops);
  }
  await shard.epoch();
  await shard.forceMerge({ maxSegments: 1 });
  return shard;
}

/** The segment opened as format 1: a copy of its directory without `columns.range`. */
async function openWithoutRangeIndex(segment: SegmentReader, dir: string): Promise<SegmentReader> {
  await fs.cp(segment.dir, dir, { recursive: true });
  await fs.rm(path.join(dir, SegmentFileName.numericRangeIndex));
  const files = { ...segment.segmentMeta.files };
  delete files[SegmentFileName.numericRangeIndex];
  return SegmentReader.open(dir, { ...segment.segmentMeta, files, formatVersion: 1 }, { liveDocsGen: 0, inplaceGens: {} });
}

/** `count` random ranges of the given selectivity, the same for both paths. */
function randomRanges(selectivity: number, count: number): Array<{ lower: number; upper: number }> {
  const width = Math.round(VALUE_SPAN * selectivity);
  const random = new Prng(Math.round(selectivity * 1e6));
  return Array.from({ length: count }, () => {
    const lower = random.below(VALUE_SPAN - width);
    return { lower, upper: lower + width };
  });
}

/** Times the ranges (after a warm-up over them) on one leaf. */
function timeRanges(leaf: LeafReader, ranges: ReadonlyArray<{ lower: number; upper: number }>, warmupMs: number): PathFigures {
  const fields = flattenMapping(MAPPING);
  const run = ({ lower, upper }: { lower: number; upper: number }): { ms: number; hits: number } => {
    const query = { bool: { filter: { range: { [FIELD]: { gte: lower, lt: upper } } } } };
    const started = performance.now();
    const result = executeQuery([leaf], fields, { query, from: 0, size: 10, trackTotalHits: true });
    return { ms: performance.now() - started, hits: result.total.value };
  };
  const warmupEnd = performance.now() + warmupMs;
  for (let n = 0; performance.now() < warmupEnd; n++) run(ranges[n % ranges.length]!);
  const samples: number[] = [];
  let hits = 0;
  for (const range of ranges) {
    const { ms, hits: found } = run(range);
    samples.push(ms);
    hits += found;
  }
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), hits: Math.round(hits / ranges.length) };
}

/** Runs the range suite and prints its table. */
export async function rangeSuite(options: RangeSuiteOptions): Promise<void> {
  const loadAtStart = loadLine();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-ranges-'));
  let shard: Shard | null = null;
  let scanned: SegmentReader | null = null;
  try {
    process.stderr.write(`ranges: indexing ${options.docs} docs and merging to one segment\n`);
    const loadStarted = performance.now();
    shard = await buildShard(path.join(dataDir, 'shard'), options.docs);
    const loadMs = performance.now() - loadStarted;
    const searcher = shard.searcher();
    try {
      const indexed = searcher.leaves.find((leaf) => leaf.maxDoc > 0);
      if (!(indexed instanceof SegmentReader) || indexed.numericRangeIndex(FIELD) === null) throw new Error('expected one merged segment with a range index');
      scanned = await openWithoutRangeIndex(indexed, path.join(dataDir, 'format-1'));
      const indexBytes = indexed.segmentMeta.files[SegmentFileName.numericRangeIndex]!.bytes;
      const columnBytes = indexed.segmentMeta.files[SegmentFileName.numericColumns]!.bytes;
      const rows: string[][] = [];
      let targetRatio = NaN;
      for (const selectivity of SELECTIVITIES) {
        process.stderr.write(`ranges: ${selectivity * 100}% selectivity\n`);
        const ranges = randomRanges(selectivity, options.queries);
        const viaIndex = timeRanges(indexed, ranges, options.warmupMs);
        const viaScan = timeRanges(scanned, ranges, options.warmupMs);
        if (viaIndex.hits !== viaScan.hits) throw new Error(`the two paths disagree: ${viaIndex.hits} vs ${viaScan.hits} hits`);
        const ratio = viaIndex.p50 / viaScan.p50;
        if (selectivity === TARGET_SELECTIVITY) targetRatio = ratio;
        rows.push([`${selectivity * 100}%`, String(viaIndex.hits), formatMs(viaIndex.p50), formatMs(viaIndex.p99), formatMs(viaScan.p50), formatMs(viaScan.p99), formatRatio(ratio)]);
      }
      const out = [
        '',
        `## Range filters: ${options.docs} docs, one long field, one segment (${options.queries} queries per row)`,
        '',
        renderTable(['selectivity', 'hits', 'index p50', 'index p99', 'scan p50', 'scan p99', 'index/scan p50'], rows),
        '',
        `target: range filter at 1% selectivity <= ${TARGET_RATIO}x a full column scan: ${formatRatio(targetRatio)} ${verdict(targetRatio <= TARGET_RATIO)}`,
        `index: columns.range ${(indexBytes / options.docs).toFixed(2)} bytes/doc on disk (columns.num ${(columnBytes / options.docs).toFixed(2)}); load + merge ${(loadMs / 1000).toFixed(1)} s`,
        `load average 1/5/15 min: ${loadAtStart} at start, ${loadLine()} at end`,
        '',
      ];
      process.stdout.write(out.join('\n'));
    } finally {
      searcher.release();
    }
  } finally {
    scanned?.close();
    await shard?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
