/** Prepared corpora live as NDJSON files under `.bench-data/` (gitignored), built once and reused. */
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/** Folder holding prepared corpora and query sets, at the repository root. */
export const BENCH_DATA_DIR = path.resolve(import.meta.dirname, '..', '..', '.bench-data');

/** Path of a cached file inside the bench data folder. */
export function benchDataPath(fileName: string): string {
  mkdirSync(BENCH_DATA_DIR, { recursive: true });
  return path.join(BENCH_DATA_DIR, fileName);
}

/**
 * Returns the path of `fileName`, writing it first from `documents` when it is not cached yet.
 * The file is written under a temporary name and renamed, so an interrupted build leaves no
 * truncated corpus behind.
 */
export async function ensureNdjson(
  fileName: string,
  documents: () => Iterable<object>,
): Promise<string> {
  const target = benchDataPath(fileName);
  if (existsSync(target)) return target;
  const temporary = `${target}.${process.pid}.tmp`;
  const out = createWriteStream(temporary);
  let pending: string[] = [];
  let pendingChars = 0;
  for (const document of documents()) {
    const line = JSON.stringify(document);
    pending.push(line);
    pendingChars += line.length;
    if (pendingChars > 1 << 20) {
      if (!out.write(pending.join('\n') + '\n')) await once(out, 'drain');
      pending = [];
      pendingChars = 0;
    }
  }
  if (pending.length > 0) out.write(pending.join('\n') + '\n');
  out.end();
  await once(out, 'finish');
  renameSync(temporary, target);
  return target;
}

/** Streams the first `limit` lines of an NDJSON file as batches of at most `batchSize` lines. */
export async function* readNdjsonBatches(
  filePath: string,
  batchSize: number,
  limit = Number.POSITIVE_INFINITY,
): AsyncGenerator<string[]> {
  const stream = createReadStream(filePath, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let carry = '';
  let batch: string[] = [];
  let emitted = 0;
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = carry + chunk;
    let start = 0;
    let newline = text.indexOf('\n', start);
    while (newline !== -1) {
      if (newline > start) {
        const line = text.slice(start, newline);
        batch.push(line);
        emitted++;
        if (batch.length === batchSize || emitted === limit) {
          yield batch;
          batch = [];
          if (emitted === limit) {
            stream.destroy();
            return;
          }
        }
      }
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    carry = text.slice(start);
  }
  if (carry.length > 0 && emitted < limit) {
    batch.push(carry);
  }
  if (batch.length > 0) yield batch;
}
