/** Prepared corpora live as NDJSON files under `.bench-data/` (gitignored), built once and reused. */
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/** Folder holding prepared corpora and query sets, at the repository root. */
export const BENCH_DATA_DIR = path.resolve(import.meta.dirname, '..', '..', '.bench-data');

/** One batch of NDJSON lines and their size in UTF-8 bytes. */
export interface LineBatch {
  lines: string[];
  bytes: number;
}

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

/** Streams an NDJSON file as batches of at most `batchSize` lines (the last one may be shorter). */
export async function* readNdjsonBatches(
  filePath: string,
  batchSize: number,
  limit = Number.POSITIVE_INFINITY,
): AsyncGenerator<LineBatch> {
  const stream = createReadStream(filePath, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let carry = '';
  let batch: LineBatch = { lines: [], bytes: 0 };
  let emitted = 0;
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = carry + chunk;
    let start = 0;
    let newline = text.indexOf('\n', start);
    while (newline !== -1) {
      if (newline > start) {
        const line = text.slice(start, newline);
        batch.lines.push(line);
        batch.bytes += Buffer.byteLength(line) + 1;
        emitted++;
        if (batch.lines.length === batchSize || emitted === limit) {
          yield batch;
          batch = { lines: [], bytes: 0 };
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
    batch.lines.push(carry);
    batch.bytes += Buffer.byteLength(carry);
  }
  if (batch.lines.length > 0) yield batch;
}
