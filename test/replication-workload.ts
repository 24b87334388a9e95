/**
 * The client side of the replication fault-injection suite: concurrent writers that index,
 * partially update (`doc` merges and `incr` on an inplace field), delete and `_bulk` a small set
 * of documents through random live nodes, recording every write with its answer (acknowledged,
 * rejected or indeterminate); and a change-feed reader that tails `_changes` from one cursor,
 * moving to another node with its last cursor whenever one fails. Every request is bounded in time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { shardFor } from '../src/cluster/routing.ts';
import type { FeedEntry, WriteAck, WriteRecord, WriteRequest } from './replication-checker.ts';

/** The longest a write or read waits for its answer. */
export const REQUEST_TIMEOUT_MS = 4_000;

/** Pause of a writer after a write that was not acknowledged (plus up to as much again at random). */
const BACKOFF_MS = 250;

/** Field the `incr` updates change: mapped `long` with `inplace: true`. */
export const COUNTER_FIELD = 'counter';

/** Mapping of the suite's collection. */
export const WORKLOAD_MAPPING = {
  properties: { writer: { type: 'keyword' }, op: { type: 'keyword' }, n: { type: 'long' }, [COUNTER_FIELD]: { type: 'long', inplace: true } },
};

/** Where the workload sends requests: a node that is not known to be down right now. */
export type PickNode = () => { url: string };

/** An HTTP answer, or the failure that stood in for it. */
type Answer = { status: number; body: any } | { failure: string; refused: boolean };

/** Sends one request with a deadline; a refused connection means the request never left. */
export async function timedCall(node: { url: string }, method: string, path: string, body?: { json?: unknown; ndjson?: string }, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Answer> {
  try {
    const headers: Record<string, string> = {};
    let payload: string | undefined;
    if (body?.json !== undefined) [payload, headers['content-type']] = [JSON.stringify(body.json), 'application/json'];
    if (body?.ndjson !== undefined) [payload, headers['content-type']] = [body.ndjson, 'application/x-ndjson'];
    const response = await request(`${node.url}${path}`, { method: method as 'GET', headers, body: payload, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.body.text();
    let decoded: unknown = text;
    try {
      decoded = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: response.statusCode, body: decoded };
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
    return { failure: `${(error as Error).name}: ${(error as Error).message}`, refused: code === 'ECONNREFUSED' };
  }
}

/** Classifies one write's answer (a whole document write, or one `_bulk` item's object). */
function classify(answer: Answer | { item: any }, write: Omit<WriteRecord, 'outcome' | 'answer' | 'completedAt'>, completedAt: number): WriteRecord {
  const record = (outcome: WriteRecord['outcome'], text: string, ack?: WriteAck): WriteRecord => ({ ...write, completedAt, outcome, answer: text, ...(ack ? { ack } : {}) });
  if ('failure' in answer) return record(answer.refused ? 'rejected' : 'indeterminate', answer.failure);
  const body = 'item' in answer ? answer.item : answer.body;
  const status = 'item' in answer ? Number(answer.item?.status) : answer.status;
  const text = `${status} ${body?.result ?? body?.error?.type ?? ''}`.trim();
  if (status >= 200 && status < 300) {
    const complete = typeof body?._seq_no === 'number' && typeof body?._version === 'number' && typeof body?._primary_term === 'number';
    if (!complete || !['created', 'updated', 'deleted', 'noop'].includes(body.result)) return record('indeterminate', `${text} (incomplete answer)`);
    return record('ok', text, { result: body.result, seq: body._seq_no + 1, version: body._version, primaryTerm: body._primary_term });
  }
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return record('rejected', text);
  return record('indeterminate', text);
}

/** Options of the writers. */
export interface WorkloadOptions {
  collection: string;
  shards: number;
  /** Document ids are `d00` … up to this many. */
  documents: number;
  writers: number;
  pickNode: PickNode;
  /** Monotonic clock shared with the checker. */
  now: () => number;
}

/** Concurrent writers recording the history; can be held (for checks) and stopped. */
export class Workload {
  /** Every write sent so far, in completion order. */
  readonly history: WriteRecord[] = [];
  private stopped = false;
  private held: Promise<void> | null = null;
  private release: (() => void) | null = null;
  private idle = new Set<number>();
  private loops: Promise<void>[] = [];
  private opCounter = 0;

  constructor(private readonly options: WorkloadOptions) {}

  /** Starts the writers. */
  start(): void {
    for (let writer = 0; writer < this.options.writers; writer++) this.loops.push(this.run(writer));
  }

  /** Holds the writers and resolves once none has a request in flight. */
  async hold(): Promise<void> {
    this.held ??= new Promise((resolve) => (this.release = resolve));
    while (this.idle.size < this.options.writers) await sleep(20);
  }

  /** Lets held writers go on. */
  resume(): void {
    this.release?.();
    [this.held, this.release] = [null, null];
  }

  /** Stops the writers after their current request. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.resume();
    await Promise.all(this.loops);
  }

  private async run(writer: number): Promise<void> {
    while (!this.stopped) {
      if (this.held) {
        this.idle.add(writer);
        await this.held;
        this.idle.delete(writer);
        continue;
      }
      const choice = Math.random();
      const sent = this.history.length;
      if (choice < 0.1) await this.bulk(writer);
      else await this.single(writer, choice < 0.45 ? 'index' : choice < 0.65 ? 'doc' : choice < 0.85 ? 'incr' : 'delete');
      // A client backs off after a failure rather than hammering an unavailable shard.
      const failed = this.history.slice(sent).some((write) => write.outcome === 'indeterminate');
      await sleep(failed ? BACKOFF_MS + Math.random() * BACKOFF_MS : 5 + Math.random() * 10);
    }
    this.idle.add(writer);
  }

  private randomId(): string {
    return `d${String(Math.floor(Math.random() * this.options.documents)).padStart(2, '0')}`;
  }

  private nextRequest(writer: number, kind: 'index' | 'doc' | 'incr' | 'delete'): { opId: string; request: WriteRequest } {
    const n = ++this.opCounter;
    const opId = `w${writer}-${n}`;
    if (kind === 'index') return { opId, request: { kind: 'index', source: { writer: `w${writer}`, op: opId, n, [COUNTER_FIELD]: 0 } } };
    if (kind === 'doc') return { opId, request: { kind: 'update', doc: { op: opId } } };
    if (kind === 'incr') return { opId, request: { kind: 'update', incr: { field: COUNTER_FIELD, by: 1 } } };
    return { opId, request: { kind: 'delete' } };
  }

  private updateBody(request: Extract<WriteRequest, { kind: 'update' }>): Record<string, unknown> {
    if (request.incr !== undefined) return { ops: [{ op: 'incr', field: request.incr.field, value: request.incr.by }] };
    return { doc: request.doc };
  }

  private async single(writer: number, kind: 'index' | 'doc' | 'incr' | 'delete'): Promise<void> {
    const { collection, shards, pickNode, now } = this.options;
    const docId = this.randomId();
    const { opId, request: write } = this.nextRequest(writer, kind);
    const invokedAt = now();
    const answer =
      write.kind === 'index'
        ? await timedCall(pickNode(), 'PUT', `/${collection}/_doc/${docId}`, { json: write.source })
        : write.kind === 'update'
          ? await timedCall(pickNode(), 'POST', `/${collection}/_update/${docId}`, { json: this.updateBody(write) })
          : await timedCall(pickNode(), 'DELETE', `/${collection}/_doc/${docId}`);
    this.history.push(classify(answer, { opId, docId, shard: shardFor(docId, shards), request: write, invokedAt }, now()));
  }

  private async bulk(writer: number): Promise<void> {
    const { collection, shards, pickNode, now } = this.options;
    const kinds = ['index', 'doc', 'incr', 'delete'] as const;
    const items = Array.from({ length: 2 + Math.floor(Math.random() * 4) }, () => ({ docId: this.randomId(), ...this.nextRequest(writer, kinds[Math.floor(Math.random() * kinds.length)]!) }));
    const lines: unknown[] = [];
    for (const { docId, request: write } of items) {
      if (write.kind === 'index') lines.push({ index: { _id: docId } }, write.source);
      else if (write.kind === 'update') lines.push({ update: { _id: docId } }, this.updateBody(write));
      else lines.push({ delete: { _id: docId } });
    }
    const invokedAt = now();
    const answer = await timedCall(pickNode(), 'POST', `/${collection}/_bulk`, { ndjson: lines.map((line) => JSON.stringify(line)).join('\n') + '\n' });
    const completedAt = now();
    const answered = !('failure' in answer) && answer.status === 200 && Array.isArray(answer.body?.items) && answer.body.items.length === items.length;
    items.forEach(({ docId, opId, request: write }, index) => {
      const base = { opId, docId, shard: shardFor(docId, shards), request: write, invokedAt };
      const item = answered ? (Object.values((answer as { body: any }).body.items[index])[0] as any) : undefined;
      this.history.push(classify(item !== undefined ? { item } : answer, base, completedAt));
    });
  }
}

/** Tails the change feed from the collection's start, reconnecting through another node on failure. */
export class FeedReader {
  /** Entries read, in feed order. */
  readonly entries: FeedEntry[] = [];
  /** Requests that failed (and were retried elsewhere with the same cursor). */
  failures = 0;
  /** Set when a node refused the reader's own cursor (a 400): the reader stops there. */
  refusal: string | null = null;
  private cursor = '0';
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: { collection: string; shards: number; pickNode: PickNode }) {}

  /** Starts tailing with long polls. */
  start(): void {
    this.loop = (async () => {
      while (!this.stopped && this.refusal === null) await this.readOnce('longpoll');
    })();
  }

  /** Stops tailing after the current poll. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /**
   * Stops tailing, then reads (not long-polling) until an answer reports nothing pending; bounded
   * by `deadline`. A long poll still in flight would carry the same cursor as the drain's first
   * read and hand back the same changes, so the reader never has two requests out at once.
   */
  async drain(deadline: number): Promise<boolean> {
    await this.stop();
    while (Date.now() < deadline && this.refusal === null) {
      const pending = await this.readOnce('normal');
      if (pending === 0) return true;
    }
    return false;
  }

  /** One request from the cursor; the number of changes still pending after it, or null on failure. */
  private async readOnce(feed: 'longpoll' | 'normal'): Promise<number | null> {
    const { collection, shards, pickNode } = this.options;
    const path = `/${collection}/_changes?feed=${feed}&timeout=1000&limit=500&since=${encodeURIComponent(this.cursor)}`;
    const answer = await timedCall(pickNode(), 'GET', path);
    if ('failure' in answer || answer.status !== 200 || !Array.isArray(answer.body?.results)) {
      this.failures++;
      if (!('failure' in answer) && answer.status >= 400 && answer.status < 500) this.refusal = `${answer.status} ${JSON.stringify(answer.body)}`;
      await sleep(100);
      return null;
    }
    for (const result of answer.body.results as Array<{ id: string; op: FeedEntry['op']; version: number; changes: Array<{ rev: string }> }>) {
      const seq = Number.parseInt(result.changes[0]!.rev.split('-')[1]!, 16);
      this.entries.push({ id: result.id, shard: shardFor(result.id, shards), op: result.op, version: result.version, seq });
    }
    this.cursor = answer.body.last_seq;
    return typeof answer.body.pending === 'number' ? answer.body.pending : null;
  }
}
