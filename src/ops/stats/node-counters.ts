/**
 * The counters the node layer and the HTTP server increment as work happens: writes by kind and
 * outcome, updates by path (inplace column write, field overlay or full re-index), bulk requests, change feeds
 * opened and HTTP traffic. Plain numbers in plain objects: incrementing one is a field write, cheap
 * enough for every request. Figures computed from other sources (shards, lanes, the process) are
 * gathered when stats are read, see `node-stats.ts`.
 */
import type { WriteResult } from '../../engine/shard/operations.ts';

/** Write counters (ES `indexing`). */
export interface IndexingCounters {
  /** Documents indexed (created or overwritten), including upserts and full updates (not inplace or field-level ones). */
  index_total: number;
  index_failed: number;
  index_time_in_millis: number;
  delete_total: number;
  delete_failed: number;
  delete_time_in_millis: number;
}

/** Partial-update counters. */
export interface UpdateCounters {
  total: number;
  /** Updates that only wrote inplace column slots (O(1), no re-index). */
  inplace: number;
  /** Field-level updates: only the changed top-level fields were written, as a field overlay (no re-index). */
  fields: number;
  /** Updates that re-indexed the whole document. */
  full: number;
  /** Updates that changed nothing (`detect_noop`). */
  noop: number;
  /** Updates of a missing document that created it (`upsert`, `doc_as_upsert`). */
  upserts: number;
  failed: number;
  time_in_millis: number;
}

/** Bulk request counters. */
export interface BulkCounters {
  requests: number;
  items: number;
  failed_items: number;
  time_in_millis: number;
}

/** Change-feed counters. */
export interface ChangesCounters {
  /** Feeds opened. */
  requests: number;
  /** Feeds opened, by `feed` mode (`normal`, `longpoll`, `continuous`, `eventsource`). */
  by_feed: Record<string, number>;
}

/** HTTP traffic counters. */
export interface HttpCounters {
  /** Connections open now. */
  current_open: number;
  total_opened: number;
  requests_total: number;
  /** Responses by status class (`2xx`, `4xx`, ...). */
  responses: Record<string, number>;
  /** Total time from request start to response end. */
  time_in_millis: number;
}

/** The kind of a single write. */
export type WriteKind = 'index' | 'delete' | 'update';

/** See the module comment. */
export class NodeCounters {
  readonly indexing: IndexingCounters = {
    index_total: 0,
    index_failed: 0,
    index_time_in_millis: 0,
    delete_total: 0,
    delete_failed: 0,
    delete_time_in_millis: 0,
  };
  readonly updates: UpdateCounters = { total: 0, inplace: 0, fields: 0, full: 0, noop: 0, upserts: 0, failed: 0, time_in_millis: 0 };
  readonly bulk: BulkCounters = { requests: 0, items: 0, failed_items: 0, time_in_millis: 0 };
  readonly changes: ChangesCounters = { requests: 0, by_feed: {} };
  readonly http: HttpCounters = { current_open: 0, total_opened: 0, requests_total: 0, responses: {}, time_in_millis: 0 };

  /** Counts one finished write: its result, or the error it failed with. */
  recordWrite(kind: WriteKind, outcome: WriteResult | Error, elapsedMs: number): void {
    const { indexing, updates } = this;
    const failed = outcome instanceof Error;
    switch (kind) {
      case 'index':
        if (failed) indexing.index_failed++;
        else indexing.index_total++;
        indexing.index_time_in_millis += elapsedMs;
        return;
      case 'delete':
        if (failed) indexing.delete_failed++;
        else if (outcome.result === 'deleted') indexing.delete_total++;
        indexing.delete_time_in_millis += elapsedMs;
        return;
      case 'update':
        updates.total++;
        updates.time_in_millis += elapsedMs;
        if (failed) updates.failed++;
        else if (outcome.result === 'noop') updates.noop++;
        else if (outcome.result === 'created') {
          updates.upserts++;
          indexing.index_total++;
        } else if (outcome.inplace === true) updates.inplace++;
        else if (outcome.fields === true) updates.fields++;
        else {
          updates.full++;
          indexing.index_total++;
        }
    }
  }

  /** Counts one bulk request (its items are counted one by one with `recordWrite`). */
  recordBulk(items: number, failedItems: number, elapsedMs: number): void {
    this.bulk.requests++;
    this.bulk.items += items;
    this.bulk.failed_items += failedItems;
    this.bulk.time_in_millis += elapsedMs;
  }

  /** Counts one opened change feed. */
  recordChangesRequest(feed: string): void {
    this.changes.requests++;
    this.changes.by_feed[feed] = (this.changes.by_feed[feed] ?? 0) + 1;
  }

  /** Counts one answered HTTP request. */
  recordHttpResponse(statusCode: number, elapsedMs: number): void {
    const statusClass = `${Math.floor(statusCode / 100)}xx`;
    this.http.requests_total++;
    this.http.responses[statusClass] = (this.http.responses[statusClass] ?? 0) + 1;
    this.http.time_in_millis += elapsedMs;
  }
}
