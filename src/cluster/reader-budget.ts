/**
 * The node's limit of open reader contexts (Elasticsearch `search.max_open_scroll_context`,
 * OpenSearch `search.max_open_pit_context`): every copy this node hosts is wrapped by
 * `BudgetedReaders`, which counts the reader contexts it opens in the node's one `ReaderBudget`.
 * Contexts live in the copy's own handle (in this thread or a worker), which expires them; the
 * budget keeps the same expiry (renewed by every use) so that a count never needs a call to the
 * copies, and forgets a copy's contexts when the copy closes.
 */
import { EngineError } from '../engine/errors.ts';
import type { ShardSearchRequest } from '../engine/query/search-request.ts';
import { DelegatingShardHandle } from './replication/delegating-handle.ts';
import type { ClosedShardFigures, FetchedQueryPhase, QueryPhase, ReaderContextInfo, ReaderKind, ReaderOpenOptions, ReaderSelector, ReaderUse, ShardHandle } from './shard-handle.ts';

/** The limits, read at each open (they are dynamic node settings). */
export type ReaderLimits = () => Record<ReaderKind, number>;

/** The setting that bounds each kind, named in the error. */
const LIMIT_SETTING: Record<ReaderKind, string> = { scroll: 'search.max_open_scroll_context', pit: 'search.max_open_pit_context' };

interface CountedReader {
  kind: ReaderKind;
  copy: string;
  keepAliveMs: number;
  expiresAt: number;
}

function contextKey(copy: string, id: string): string {
  return `${copy}/${id}`;
}

/** See the module comment. */
export class ReaderBudget {
  private readonly open = new Map<string, CountedReader>();
  private nextReservation = 0;

  constructor(private readonly limits: ReaderLimits) {}

  /** Counts a context about to open; too_many_scroll_contexts when its kind is at the limit. Returns the key to `confirm` or `forget`. */
  reserve(kind: ReaderKind, copy: string, keepAliveMs: number): string {
    const now = Date.now();
    let count = 0;
    for (const [key, reader] of this.open) {
      if (reader.expiresAt <= now) this.open.delete(key);
      else if (reader.kind === kind) count++;
    }
    const limit = this.limits()[kind];
    if (count >= limit) {
      const what = kind === 'scroll' ? 'scroll' : 'Point In Time';
      throw new EngineError(
        'too_many_scroll_contexts',
        `Trying to create too many ${what} contexts. Must be less than or equal to: [${limit}]. This limit can be set by changing the [${LIMIT_SETTING[kind]}] setting.`,
      );
    }
    const key = `reserved:${this.nextReservation++}`;
    this.open.set(key, { kind, copy, keepAliveMs, expiresAt: now + keepAliveMs });
    return key;
  }

  /** Moves a reservation to the context that opened (a context is its copy and id: a group shares its id across copies). */
  confirm(key: string, id: string): void {
    const reader = this.open.get(key);
    this.open.delete(key);
    if (reader) this.open.set(contextKey(reader.copy, id), reader);
  }

  /** Renews a context's expiry after a use, with a new keep-alive or the one it had. */
  touch(copy: string, id: string, keepAliveMs?: number): void {
    const reader = this.open.get(contextKey(copy, id));
    if (!reader) return;
    if (keepAliveMs !== undefined) reader.keepAliveMs = keepAliveMs;
    reader.expiresAt = Date.now() + reader.keepAliveMs;
  }

  /** Stops counting a context (closed). */
  forget(copy: string, id: string): void {
    this.open.delete(contextKey(copy, id));
  }

  /** Drops a reservation whose open failed. */
  release(key: string): void {
    this.open.delete(key);
  }

  /** Stops counting a copy's contexts, all of them or those of one kind. */
  forgetCopy(copy: string, kind?: ReaderKind): void {
    for (const [key, reader] of this.open) if (reader.copy === copy && (kind === undefined || reader.kind === kind)) this.open.delete(key);
  }

  /** Open contexts by kind (expired ones left out). */
  counts(): Record<ReaderKind, number> {
    const now = Date.now();
    const counts = { scroll: 0, pit: 0 };
    for (const reader of this.open.values()) if (reader.expiresAt > now) counts[reader.kind]++;
    return counts;
  }
}

/** A copy hosted here whose reader contexts count in the node's budget. */
export class BudgetedReaders extends DelegatingShardHandle {
  constructor(
    inner: ShardHandle,
    private readonly budget: ReaderBudget,
  ) {
    super(inner);
  }

  override async openReader(options: ReaderOpenOptions): Promise<ReaderContextInfo> {
    const key = this.budget.reserve(options.kind, this.uuid, options.keepAliveMs);
    try {
      const info = await this.inner.openReader(options);
      this.budget.confirm(key, info.id);
      return info;
    } catch (error) {
      this.budget.release(key);
      throw error;
    }
  }

  override async closeReaders(selector: ReaderSelector): Promise<number> {
    const closed = await this.inner.closeReaders(selector);
    if ('ids' in selector) for (const id of selector.ids) this.budget.forget(this.uuid, id);
    else this.budget.forgetCopy(this.uuid, selector.kind);
    return closed;
  }

  override query(request: ShardSearchRequest, reader?: ReaderUse): Promise<QueryPhase> {
    return this.counted(reader, () => this.inner.query(request, reader));
  }

  override queryAndFetch(request: ShardSearchRequest, reader?: ReaderUse): Promise<FetchedQueryPhase> {
    return this.counted(reader, () => this.inner.queryAndFetch(request, reader));
  }

  override async close(): Promise<ClosedShardFigures> {
    this.budget.forgetCopy(this.uuid);
    return this.inner.close();
  }

  /** Runs a search; one on a reader context renews its count, or stops counting it when the copy no longer has it. */
  private async counted<T>(reader: ReaderUse | undefined, search: () => Promise<T>): Promise<T> {
    if (reader === undefined) return search();
    try {
      const result = await search();
      this.budget.touch(this.uuid, reader.id, reader.keepAliveMs);
      return result;
    } catch (error) {
      if (error instanceof EngineError && error.code === 'search_context_missing') this.budget.forget(this.uuid, reader.id);
      throw error;
    }
  }
}
