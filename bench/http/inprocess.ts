/**
 * The in-process half of the HTTP suite, run as a worker process: the same documents go into
 * Trove shards through `writeBatch` (same batch sizes, same number in flight), the same
 * compaction runs (if the server managed to run it), and the same query mix runs through `searcher.query` + `fetch` with one
 * caller. The difference to the server figures is the cost of HTTP, JSON and the node layer.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CITY_MAPPING } from '../corpora/cities.ts';
import { EMAIL_MAPPING } from '../corpora/emails.ts';
import { readNdjsonBatches } from '../corpora/ndjson.ts';
import type { Mapping } from '../../src/engine/mapping/mapping.ts';
import { DEFAULT_ENGINE_SETTINGS, Shard } from '../../src/engine/shard/shard.ts';
import type { CorpusDocument } from '../peers/harness.ts';
import type { LoadResult, LoadSpec } from './bulk-load.ts';
import { driveMix, type DriveOptions, type DriveResult } from './drive.ts';
import type { BenchCollection, MixQuery } from './query-mix.ts';

/** What the HTTP suite asks the in-process worker to do. */
export interface InProcessRequest {
  dataDir: string;
  loads: Array<LoadSpec & { collection: BenchCollection }>;
  /** Batches in flight while loading (as for the server). */
  concurrency: number;
  mixPath: string;
  drive: DriveOptions;
  /** Force-merge to one segment before the mix (only when the server could compact too). */
  compact: boolean;
}

/** What the in-process worker measured. */
export interface InProcessReport {
  loads: Record<string, LoadResult>;
  /** Force-merge time, or why it was skipped. */
  compaction: number | string;
  mix: DriveResult;
}

const MAPPINGS: Record<BenchCollection, Mapping> = { emails: EMAIL_MAPPING, cities: CITY_MAPPING };

async function load(shard: Shard, spec: LoadSpec, concurrency: number): Promise<LoadResult> {
  const result: LoadResult = { docs: 0, sourceBytes: 0, ms: 0, failedItems: 0, firstFailure: null };
  const batches: CorpusDocument[][] = [];
  for await (const batch of readNdjsonBatches(spec.corpusPath, spec.batchSize, spec.docs)) {
    const documents = batch.map((line) => JSON.parse(line) as CorpusDocument);
    for (const { source } of documents) result.sourceBytes += Buffer.byteLength(JSON.stringify(source));
    result.docs += documents.length;
    batches.push(documents);
  }
  let next = 0;
  const writer = async (): Promise<void> => {
    while (next < batches.length) {
      const documents = batches[next++] as CorpusDocument[];
      const outcomes = await shard.writeBatch(documents.map(({ id, source }) => ({ kind: 'index', id, source })));
      for (const outcome of outcomes) {
        if (!(outcome instanceof Error)) continue;
        result.failedItems++;
        result.firstFailure ??= `${outcome.code}: ${outcome.message}`;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, writer));
  result.ms = performance.now() - started;
  return result;
}

/** Runs one mix query the way the node's search does it, minus HTTP: query phase, then fetch. */
function execute(shards: Record<BenchCollection, Shard>, query: MixQuery): void {
  const searcher = shards[query.collection].searcher();
  try {
    const body = query.body;
    const result = searcher.query({ query: body.query, from: 0, size: Number(body.size ?? 10), sort: body.sort, aggs: body.aggs });
    for (const hit of result.hits) searcher.fetch(hit);
  } finally {
    searcher.release();
  }
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as InProcessRequest;
  const shards = {} as Record<BenchCollection, Shard>;
  const loads: Record<string, LoadResult> = {};
  for (const spec of request.loads) {
    shards[spec.collection] = await Shard.open({
      dir: path.join(request.dataDir, spec.collection),
      uuid: `bench-${spec.collection}`,
      mapping: MAPPINGS[spec.collection],
      settings: DEFAULT_ENGINE_SETTINGS,
    });
    const loaded = await load(shards[spec.collection], spec, request.concurrency);
    loads[spec.collection] = loaded;
    process.stderr.write(`  [in-process] loaded ${loaded.docs} ${spec.collection} in ${(loaded.ms / 1000).toFixed(1)} s\n`);
  }
  let compaction: number | string = 'skipped, as the server could not compact';
  if (request.compact) {
    const compactionStarted = performance.now();
    for (const shard of Object.values(shards)) await shard.forceMerge({ maxSegments: 1 });
    compaction = performance.now() - compactionStarted;
  }
  const mix = JSON.parse(readFileSync(request.mixPath, 'utf8')) as MixQuery[];
  const result = await driveMix(mix, request.drive, (query) => execute(shards, query));
  for (const shard of Object.values(shards)) await shard.close();
  const report: InProcessReport = { loads, compaction, mix: result };
  process.stdout.write(`RESULT ${JSON.stringify(report)}\n`);
}

await main();
