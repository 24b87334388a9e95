/**
 * Fetch suite: what the fetch phase of a top-10 search costs when the request reads `_source`
 * and when it does not (`_source: false`: id and versions from the doc meta, no stored block
 * read or decompressed). A shard indexes the e-mails (`--docs`), epochs and merges to one
 * segment; then for the common and rare term queries of the engine suite, each timed query
 * runs its query phase and fetches its 10 hits both ways, on the same searcher.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_ENGINE_SETTINGS, Shard } from '../src/engine/shard/shard.ts';
import type { Searcher } from '../src/engine/shard/searcher.ts';
import { SEGMENT_FORMAT_VERSION, SegmentFileName } from '../src/engine/segment/segment-file.ts';
import { SegmentReader } from '../src/engine/segment/segment-reader.ts';
import { EMAIL_MAPPING, emailCorpus } from './corpora/emails.ts';
import { readNdjsonBatches } from './corpora/ndjson.ts';
import type { CorpusDocument } from './peers/harness.ts';
import { querySetFile, readQuerySet, type QueryClass } from './query-set.ts';
import { formatMs, formatRatio, percentile } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the fetch suite. */
export interface FetchSuiteOptions {
  /** E-mail documents. */
  docs: number;
  /** Warm-up per query class, ms. */
  warmupMs: number;
}

const CLASSES: QueryClass[] = ['common', 'rare'];
const BATCH = 1000;

function loadLine(): string {
  return os.loadavg().map((value) => value.toFixed(2)).join(' / ');
}

/** Query phase, fetch with source and fetch without source of every query, in ms per query. */
function timeClass(searcher: Searcher, queries: readonly string[][], warmupMs: number): { query: number[]; withSource: number[]; withoutSource: number[] } {
  const times = { query: [] as number[], withSource: [] as number[], withoutSource: [] as number[] };
  const run = (terms: readonly string[], record: boolean): void => {
    const started = performance.now();
    const { hits } = searcher.query({ query: { match: { body: { query: terms.join(' ') } } }, from: 0, size: 10 });
    const queried = performance.now();
    for (const hit of hits) searcher.fetch(hit, true);
    const fetchedWith = performance.now();
    for (const hit of hits) searcher.fetch(hit, false);
    const fetchedWithout = performance.now();
    if (!record) return;
    times.query.push(queried - started);
    times.withSource.push(fetchedWith - queried);
    times.withoutSource.push(fetchedWithout - fetchedWith);
  };
  const warmupEnd = performance.now() + warmupMs;
  for (let n = 0; performance.now() < warmupEnd; n++) run(queries[n % queries.length]!, false);
  for (const terms of queries) run(terms, true);
  return times;
}

/** Runs the fetch suite and prints its table. */
export async function fetchSuite(options: FetchSuiteOptions): Promise<void> {
  const loadAtStart = loadLine();
  const corpusPath = await emailCorpus(options.docs);
  const querySet = readQuerySet(await querySetFile(corpusPath, options.docs));
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-fetch-'));
  const shard = await Shard.open({ dir: dataDir, uuid: 'bench-fetch', mapping: EMAIL_MAPPING, settings: { ...DEFAULT_ENGINE_SETTINGS, changesRetentionMs: 0 } });
  try {
    process.stderr.write(`fetch: indexing ${options.docs} e-mails and merging to one segment\n`);
    for await (const lines of readNdjsonBatches(corpusPath, BATCH, options.docs)) {
      await shard.writeBatch(lines.map((line) => JSON.parse(line) as CorpusDocument).map(({ id, source }) => ({ kind: 'index' as const, id, source })));
    }
    await shard.epoch();
    await shard.forceMerge({ maxSegments: 1 });
    const searcher = shard.searcher();
    const segment = searcher.leaves.find((leaf) => leaf.maxDoc > 0);
    const sourceBytes = segment instanceof SegmentReader ? segment.segmentMeta.files[SegmentFileName.storedSource]!.bytes : NaN;
    const rows: string[][] = [];
    try {
      for (const queryClass of CLASSES) {
        const times = timeClass(searcher, querySet[queryClass], options.warmupMs);
        const query = percentile(times.query, 0.5);
        const withSource = percentile(times.withSource, 0.5);
        const withoutSource = percentile(times.withoutSource, 0.5);
        rows.push([
          queryClass,
          String(times.query.length),
          formatMs(query),
          formatMs(withSource),
          formatMs(withoutSource),
          formatRatio(withoutSource / withSource),
          formatRatio((query + withoutSource) / (query + withSource)),
        ]);
      }
    } finally {
      searcher.release();
    }
    const out = [
      '',
      `## Fetch phase: ${options.docs} e-mails, one segment, top 10 of a body match`,
      '',
      renderTable(['class', 'queries', 'query p50', 'fetch 10 with _source p50', 'fetch 10 without p50', 'fetch ratio', 'query+fetch ratio'], rows),
      '',
      'with _source: stored blocks read, decompressed (cache of 8 blocks) and parsed, inplace values overlaid; without: id, seq_no, version, primary term from the doc meta',
      `stored source: ${(sourceBytes / options.docs).toFixed(1)} bytes/doc on disk (segment format ${SEGMENT_FORMAT_VERSION})`,
      `load average 1/5/15 min: ${loadAtStart} at start, ${loadLine()} at end`,
      '',
    ];
    process.stdout.write(out.join('\n'));
  } finally {
    await shard.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
