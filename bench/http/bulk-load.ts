/** Bulk-loads a prepared corpus into a Trove server through `_bulk`, a few batches in flight. */
import type { Dispatcher } from 'undici';
import { readNdjsonBatches } from '../corpora/ndjson.ts';
import type { CorpusDocument } from '../peers/harness.ts';

/** One corpus to load: where it is, how much of it, and in which batches. */
export interface LoadSpec {
  collection: string;
  corpusPath: string;
  docs: number;
  batchSize: number;
}

/** Throughput of one load. */
export interface LoadResult {
  docs: number;
  /** UTF-8 bytes of the documents' JSON sources (the same measure as the engine suite). */
  sourceBytes: number;
  ms: number;
  failedItems: number;
  firstFailure: string | null;
}

/** NDJSON request bodies, prepared before the clock starts. */
export interface BulkBodies {
  bodies: string[];
  docs: number;
  sourceBytes: number;
}

/** Reads a corpus into `_bulk` bodies of `batchSize` index actions each. */
export async function prepareBulkBodies(spec: LoadSpec): Promise<BulkBodies> {
  const prepared: BulkBodies = { bodies: [], docs: 0, sourceBytes: 0 };
  for await (const batch of readNdjsonBatches(spec.corpusPath, spec.batchSize, spec.docs)) {
    const parts: string[] = [];
    for (const line of batch) {
      const { id, source } = JSON.parse(line) as CorpusDocument;
      const sourceJson = JSON.stringify(source);
      parts.push(JSON.stringify({ index: { _id: id } }), sourceJson);
      prepared.sourceBytes += Buffer.byteLength(sourceJson);
      prepared.docs++;
    }
    prepared.bodies.push(`${parts.join('\n')}\n`);
  }
  return prepared;
}

/** The `_bulk` response fields the loader checks. */
interface BulkResponseBody {
  errors: boolean;
  items: Array<Record<string, { status: number; error?: { type: string; reason: string } }>>;
}

/** Sends the bodies with `concurrency` requests in flight and times the whole load. */
export async function bulkLoad(
  dispatcher: Dispatcher,
  collection: string,
  prepared: BulkBodies,
  concurrency: number,
): Promise<LoadResult> {
  const result: LoadResult = { docs: prepared.docs, sourceBytes: prepared.sourceBytes, ms: 0, failedItems: 0, firstFailure: null };
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < prepared.bodies.length) {
      const body = prepared.bodies[next++] as string;
      const response = await dispatcher.request({
        method: 'POST',
        path: `/${collection}/_bulk`,
        headers: { 'content-type': 'application/x-ndjson' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`_bulk on ${collection} answered ${response.statusCode}: ${text.slice(0, 300)}`);
      const parsed = JSON.parse(text) as BulkResponseBody;
      if (!parsed.errors) continue;
      for (const item of parsed.items) {
        const outcome = Object.values(item)[0];
        if (outcome?.error) {
          result.failedItems++;
          result.firstFailure ??= `${outcome.error.type}: ${outcome.error.reason}`;
        }
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, sender));
  result.ms = performance.now() - started;
  return result;
}
