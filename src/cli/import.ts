/**
 * `trove import FILE.ndjson --collection NAME`: streams an NDJSON file into a collection through
 * `_bulk`, with a progress bar, retries of transient failures and resumption after interruption.
 *
 * Resumption: `<file>.trove-import.json` records the byte offset (and line) up to which every
 * batch was acknowledged. A rerun skips that prefix. Batches finish out of order when several are
 * in flight, so the recorded offset only moves past a batch once every earlier batch is done.
 * After a kill -9, the batches in flight at that moment are sent again: with `--id-field` they
 * overwrite themselves (exactly once); with server-generated ids they may be duplicated. Ctrl-C
 * waits for the batches in flight, so it loses and duplicates nothing.
 */
import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, appendFile, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import cliProgress from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import { Pool } from 'undici';
import { DEFAULT_CLI_DATA_PATH, resolveApiKey } from './api-key.ts';

/** Options of one import run, as the command line gives them. */
export interface ImportOptions {
  file: string;
  collection: string;
  url: string;
  batch: number;
  concurrency: number;
  idField?: string;
  /** API key sent as `Authorization: Bearer <key>` (needed when the server has security enabled). */
  apiKey?: string;
  format: 'auto' | 'docs' | 'bulk';
  restart: boolean;
  progress: boolean;
}

/** What the resume file holds (version 1). */
interface ImportState {
  version: 1;
  collection: string;
  /** sha256 of the file's first 64 KiB, to notice a different file under the same name. */
  head: string;
  offset: number;
  line: number;
  docs: number;
  failed: number;
  completed: boolean;
}

/** One document (or delete) to send: its bulk lines and where it came from. */
interface BulkEntry {
  line: number;
  lines: string;
}

/** A group of entries sent as one `_bulk` request. */
interface Batch {
  entries: BulkEntry[];
  endOffset: number;
  endLine: number;
  done: boolean;
}

/** Outcome of a run, printed as the summary. */
export interface ImportSummary {
  docs: number;
  failed: number;
  skippedBytes: number;
  failuresByType: Map<string, { count: number; example: string }>;
  interrupted: boolean;
  /** The resume file says this file was already imported completely. */
  alreadyComplete: boolean;
  fatal?: string;
}

const BULK_ACTIONS = new Set(['index', 'create', 'update', 'delete']);
const TRANSIENT_STATUS = new Set([429, 502, 503, 504]);
const MAX_ATTEMPTS = 8;

/** Registers `trove import` on the CLI program. */
export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description('import an NDJSON file (one document per line, or bulk action/source pairs) into a collection')
    .argument('<file>', 'NDJSON file')
    .requiredOption('-c, --collection <name>', 'target collection')
    .option('--url <url>', 'Trove base URL', 'http://127.0.0.1:9200')
    .option('--batch <n>', 'documents per _bulk request', positiveInteger, 1000)
    .option('--concurrency <n>', 'bulk requests in flight', positiveInteger, 2)
    .option('--id-field <field>', 'use this (dotted) field of each document as its _id')
    .addOption(new Option('--api-key <key>', 'API key with the write role (default: $TROVE_API_KEY, else <data>/bootstrap-admin.key)').env('TROVE_API_KEY'))
    .option('--data <path>', "the local node's path.data, where its first start wrote bootstrap-admin.key", DEFAULT_CLI_DATA_PATH)
    .addOption(new Option('--format <format>', 'line format: documents, bulk action/source pairs, or detect').choices(['auto', 'docs', 'bulk']).default('auto'))
    .option('--restart', 'ignore the resume state and import from the start', false)
    .option('--no-progress', 'do not draw the progress bar')
    .action(async (file: string, flags: Record<string, unknown>, command: Command) => {
      const unreadable = await unreadableFileReason(file);
      if (unreadable !== null) command.error(`trove import: ${unreadable}`, { exitCode: 1, code: 'trove.import.file' });
      const format = flags.format as ImportOptions['format'];
      const summary = await runImport({
        file,
        collection: String(flags.collection),
        url: String(flags.url),
        batch: flags.batch as number,
        concurrency: flags.concurrency as number,
        idField: flags.idField as string | undefined,
        apiKey: await resolveApiKey({ apiKey: flags.apiKey as string | undefined, dataPath: flags.data as string }),
        format,
        restart: flags.restart === true,
        progress: flags.progress !== false,
      });
      process.stdout.write(formatSummary(summary, file));
      process.exitCode = exitCodeFor(summary);
    });
}

/** Why `file` cannot be imported (missing, a directory, not readable), in one line; null when it can. */
export async function unreadableFileReason(file: string): Promise<string | null> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) return `${file} is a directory, not an NDJSON file`;
    await access(file, constants.R_OK);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return `no such file: ${file}`;
    if (code === 'EACCES' || code === 'EPERM') return `cannot read ${file}: permission denied`;
    return `cannot read ${file}: ${(error as Error).message}`;
  }
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 1) throw new InvalidArgumentError('expected a positive integer');
  return parsed;
}

/** Runs one import; never throws for server or data problems (they end up in the summary). */
export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const statePath = `${options.file}.trove-import.json`;
  const failedPath = `${options.file}.trove-import.failed.ndjson`;
  const fileSize = (await stat(options.file)).size;
  const head = await hashHead(options.file);
  const summary: ImportSummary = {
    docs: 0,
    failed: 0,
    skippedBytes: 0,
    failuresByType: new Map(),
    interrupted: false,
    alreadyComplete: false,
  };
  let state: ImportState;
  try {
    state = await loadState(statePath, options, head);
  } catch (error) {
    summary.fatal = (error as Error).message;
    return summary;
  }
  summary.skippedBytes = state.offset;
  if (state.completed) {
    summary.alreadyComplete = true;
    return summary;
  }
  const docsBefore = state.docs;
  const failedBefore = state.failed;

  const pool = new Pool(options.url, { connections: options.concurrency, keepAliveTimeout: 30_000 });
  const server: TroveConnection = {
    pool,
    headers: options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` },
  };
  try {
    await checkCollection(server, options.collection);
  } catch (error) {
    summary.fatal = (error as Error).message;
    await pool.close();
    return summary;
  }
  const bar = options.progress
    ? new cliProgress.SingleBar({
        format: 'importing [{bar}] {percentage}% | {docs} docs | {rate} docs/s | ETA {eta_formatted}',
        hideCursor: true,
      })
    : null;
  const startedAt = Date.now();
  bar?.start(fileSize, state.offset, { docs: 0, rate: 0 });

  let stopping = false;
  const onSignal = (): void => {
    if (stopping) process.exit(130);
    stopping = true;
    summary.interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const inFlight: Batch[] = [];
  const running = new Set<Promise<void>>();
  const recordFailure = async (entry: BulkEntry, type: string, reason: string): Promise<void> => {
    summary.failed++;
    const known = summary.failuresByType.get(type);
    if (known) known.count++;
    else summary.failuresByType.set(type, { count: 1, example: `line ${entry.line}: ${reason}` });
    await appendFile(failedPath, JSON.stringify({ line: entry.line, type, reason, request: entry.lines }) + '\n');
  };
  // State writes are chained so that concurrent commits land in order, one file write at a time.
  let saving: Promise<void> = Promise.resolve();
  const persist = (): Promise<void> => {
    const snapshot = { ...state };
    saving = saving.then(() => saveState(statePath, snapshot));
    return saving;
  };
  const commit = async (): Promise<void> => {
    let moved = false;
    while (inFlight.length > 0 && inFlight[0]!.done) {
      const batch = inFlight.shift()!;
      state.offset = batch.endOffset;
      state.line = batch.endLine;
      moved = true;
    }
    if (moved) {
      state.docs = summary.docs + docsBefore;
      state.failed = summary.failed + failedBefore;
      await persist();
      const seconds = (Date.now() - startedAt) / 1000;
      bar?.update(state.offset, { docs: summary.docs, rate: Math.round(summary.docs / Math.max(seconds, 0.001)) });
    }
  };

  const dispatch = async (batch: Batch): Promise<void> => {
    inFlight.push(batch);
    const task = sendBatch(server, options.collection, batch.entries, summary, recordFailure).then(async () => {
      batch.done = true;
      await commit();
    });
    const tracked = task.catch((error: unknown) => {
      summary.fatal ??= (error as Error).message;
    });
    running.add(tracked);
    void tracked.finally(() => running.delete(tracked));
    while (running.size >= options.concurrency) await Promise.race(running);
  };

  try {
    let batch: Batch = { entries: [], endOffset: state.offset, endLine: state.line, done: false };
    let bulkMode = options.format === 'bulk' ? true : options.format === 'docs' ? false : undefined;
    let pendingAction: { line: number; text: string; action: string } | null = null;
    for await (const { text, line, endOffset } of readLines(options.file, state.offset, state.line)) {
      if (stopping || summary.fatal) break;
      batch.endOffset = endOffset;
      batch.endLine = line;
      if (text.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        await recordFailure({ line, lines: text }, 'json_parse_exception', (error as Error).message);
        continue;
      }
      bulkMode ??= isBulkAction(parsed);
      if (bulkMode) {
        if (pendingAction === null) {
          if (!isBulkAction(parsed)) {
            await recordFailure({ line, lines: text }, 'illegal_argument_exception', 'expected a bulk action line');
            continue;
          }
          const action = Object.keys(parsed as object)[0]!;
          if (action !== 'delete') {
            pendingAction = { line, text, action };
            continue;
          }
          batch.entries.push({ line, lines: `${text}\n` });
        } else {
          batch.entries.push({ line: pendingAction.line, lines: `${pendingAction.text}\n${text}\n` });
          pendingAction = null;
        }
      } else {
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          await recordFailure({ line, lines: text }, 'mapper_parsing_exception', 'a document must be a JSON object');
          continue;
        }
        const action = actionFor(parsed as Record<string, unknown>, options.idField);
        if (action === null) {
          await recordFailure({ line, lines: text }, 'illegal_argument_exception', `the document has no string or number [${options.idField}]`);
          continue;
        }
        batch.entries.push({ line, lines: `${JSON.stringify(action)}\n${text}\n` });
      }
      if (batch.entries.length >= options.batch) {
        await dispatch(batch);
        batch = { entries: [], endOffset, endLine: line, done: false };
      }
    }
    if (!stopping && !summary.fatal) {
      if (pendingAction !== null) {
        await recordFailure({ line: pendingAction.line, lines: pendingAction.text }, 'illegal_argument_exception', 'bulk action without a source line');
      }
      await dispatch(batch);
    }
    await Promise.all(running);
    await commit();
    if (!stopping && !summary.fatal && inFlight.length === 0) {
      state.completed = true;
      await persist();
    }
  } finally {
    bar?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await pool.close();
  }
  return summary;
}

/** The server an import talks to: a connection pool and the headers of every request. */
interface TroveConnection {
  pool: Pool;
  headers: Record<string, string>;
}

/** Fails unless the collection exists; retries while the server is unreachable. */
async function checkCollection(server: TroveConnection, collection: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await server.pool.request({ method: 'HEAD', path: `/${encodeURIComponent(collection)}`, headers: server.headers });
      await response.body.dump();
      if (response.statusCode === 200) return;
      if (response.statusCode === 404) throw new Error(`no such index [${collection}]`);
      if (response.statusCode === 401 || response.statusCode === 403) {
        throw new Error(
          response.statusCode === 401
            ? 'the server requires a valid API key: pass --api-key, set TROVE_API_KEY, or point --data at the node data holding bootstrap-admin.key'
            : 'the API key lacks the write role or the namespace of this collection (HTTP 403)',
        );
      }
      if (!TRANSIENT_STATUS.has(response.statusCode) || attempt >= MAX_ATTEMPTS) {
        throw new Error(`checking collection [${collection}] failed with HTTP ${response.statusCode}`);
      }
    } catch (error) {
      if (!isTransientNetworkError(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
    await sleep(Math.min(250 * 2 ** (attempt - 1), 8000));
  }
}

/** Sends entries through `_bulk`, retrying transient failures (whole request or per item). */
async function sendBatch(
  server: TroveConnection,
  collection: string,
  entries: BulkEntry[],
  summary: ImportSummary,
  recordFailure: (entry: BulkEntry, type: string, reason: string) => Promise<void>,
): Promise<void> {
  let pending = entries;
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > 1) await sleep(Math.min(250 * 2 ** (attempt - 2), 8000));
    let status: number;
    let body: { items?: Array<Record<string, { status: number; error?: { type?: string; reason?: string } }>> } | null = null;
    try {
      const response = await server.pool.request({
        method: 'POST',
        path: `/${encodeURIComponent(collection)}/_bulk`,
        headers: { ...server.headers, 'content-type': 'application/x-ndjson' },
        body: pending.map((entry) => entry.lines).join(''),
      });
      status = response.statusCode;
      const text = await response.body.text();
      if (status === 200) body = JSON.parse(text);
      else if (!TRANSIENT_STATUS.has(status)) throw new Error(`_bulk failed with HTTP ${status}: ${reasonOf(text)}`);
    } catch (error) {
      if (!isTransientNetworkError(error) || attempt >= MAX_ATTEMPTS) throw error;
      continue;
    }
    if (body === null) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`_bulk still failing with HTTP ${status} after ${attempt} attempts`);
      continue;
    }
    const items = body.items ?? [];
    if (items.length !== pending.length) throw new Error(`_bulk answered ${items.length} items for ${pending.length} sent`);
    const retry: BulkEntry[] = [];
    for (let index = 0; index < items.length; index++) {
      const result = Object.values(items[index]!)[0]!;
      if (result.status < 300) summary.docs++;
      else if (result.status === 429 && attempt < MAX_ATTEMPTS) retry.push(pending[index]!);
      else await recordFailure(pending[index]!, result.error?.type ?? `http_${result.status}`, result.error?.reason ?? '');
    }
    pending = retry;
  }
}

function isTransientNetworkError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'].includes(code);
}

function reasonOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { reason?: string } };
    return parsed.error?.reason ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}

function isBulkAction(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || !BULK_ACTIONS.has(keys[0]!)) return false;
  const meta = (value as Record<string, unknown>)[keys[0]!];
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta);
}

/** The bulk action for a plain document; null when `--id-field` is set but the document lacks it. */
function actionFor(document: Record<string, unknown>, idField: string | undefined): { index: { _id?: string } } | null {
  if (idField === undefined) return { index: {} };
  let value: unknown = document;
  for (const part of idField.split('.')) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  }
  if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) {
    return { index: { _id: String(value) } };
  }
  return null;
}

/** Yields the file's lines from a byte offset, each with its 1-based number and end offset. */
async function* readLines(
  file: string,
  startOffset: number,
  startLine: number,
): AsyncGenerator<{ text: string; line: number; endOffset: number }> {
  let offset = startOffset;
  let line = startLine;
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { start: startOffset, highWaterMark: 1 << 20 })) {
    const data = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let start = 0;
    for (let newline = data.indexOf(0x0a); newline >= 0; newline = data.indexOf(0x0a, start)) {
      offset += newline + 1 - start;
      line++;
      yield { text: data.toString('utf8', start, newline), line, endOffset: offset };
      start = newline + 1;
    }
    rest = data.subarray(start);
  }
  if (rest.length > 0) {
    offset += rest.length;
    line++;
    yield { text: rest.toString('utf8'), line, endOffset: offset };
  }
}

async function hashHead(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return createHash('sha256').update(buffer.subarray(0, bytesRead)).digest('hex');
  } finally {
    await handle.close();
  }
}

async function loadState(path: string, options: ImportOptions, head: string): Promise<ImportState> {
  const fresh: ImportState = { version: 1, collection: options.collection, head, offset: 0, line: 0, docs: 0, failed: 0, completed: false };
  if (options.restart) return fresh;
  let saved: ImportState;
  try {
    saved = JSON.parse(await readFile(path, 'utf8')) as ImportState;
  } catch {
    return fresh;
  }
  if (saved.version !== 1 || saved.head !== head) return fresh;
  if (saved.collection !== options.collection) {
    throw new Error(
      `${path} records an import into [${saved.collection}], not [${options.collection}]; pass --restart to start over`,
    );
  }
  return saved;
}

async function saveState(path: string, state: ImportState): Promise<void> {
  const temp = `${path}.tmp`;
  await writeFile(temp, JSON.stringify(state) + '\n');
  await rename(temp, path);
}

/** Exit status of a run: 0 all imported, 1 some items failed, 2 stopped by an error, 130 interrupted. */
export function exitCodeFor(summary: ImportSummary): number {
  if (summary.fatal) return 2;
  if (summary.interrupted) return 130;
  return summary.failed > 0 ? 1 : 0;
}

/** The human-readable end-of-run report. */
export function formatSummary(summary: ImportSummary, file: string): string {
  const lines: string[] = [];
  if (summary.alreadyComplete) return `${file} was already imported completely; pass --restart to import it again\n`;
  if (summary.skippedBytes > 0) lines.push(`resumed after byte ${summary.skippedBytes} (already imported)`);
  lines.push(`imported ${summary.docs} documents, ${summary.failed} failed`);
  for (const [type, { count, example }] of summary.failuresByType) lines.push(`  ${type}: ${count} (e.g. ${example})`);
  if (summary.failed > 0) lines.push(`failed items are listed in ${file}.trove-import.failed.ndjson`);
  if (summary.interrupted) lines.push('interrupted: run the same command again to resume');
  if (summary.fatal) lines.push(`import stopped: ${summary.fatal}; run the same command again to resume`);
  return lines.join('\n') + '\n';
}
