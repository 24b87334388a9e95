/**
 * The etcd coordinator's writes: every one is a transaction compared on the mod revisions of what
 * it was computed from, bounded by a deadline, and resolves once the view includes it. The catalog
 * document is written by `changeCatalog`; API keys, one key each, by the `*ApiKey*` methods.
 */
import type { Etcd3, ICompare, IRequestOp, ITxnResponse } from 'etcd3';
import { diffCatalogs, type ApiKeyRecord, type Catalog } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { apiKeyExistsError, recordApiKeyUseIn } from '../catalog-rules.ts';
import type { CatalogFeed } from './catalog-feed.ts';
import { catalogDocument, parseApiKeyRecord, prefixRangeEnd, type EtcdLayout } from './etcd-layout.ts';

const MAX_ATTEMPTS = 50;
const VIEW_GRACE_MS = 2_000;

/** `error` as a CatalogError: etcd failures become catalog_unavailable. */
export function unavailable(error: unknown, what: string): CatalogError {
  if (error instanceof CatalogError) return error;
  return new CatalogError('catalog_unavailable', `${what}: ${error instanceof Error ? error.message : String(error)}`);
}

function put(key: string, value: string): IRequestOp {
  return { request_put: { key: Buffer.from(key), value: Buffer.from(value) } };
}

function modEquals(key: string, revision: number): ICompare {
  return { key: Buffer.from(key), target: 'Mod', result: 'Equal', mod_revision: revision };
}

/** Highest mod revision among the keys a failure-branch range read returned, or 0. */
function readRevision(response: ITxnResponse, index: number): number {
  const kvs = response.responses[index]?.response_range?.kvs ?? [];
  return kvs.reduce((highest, kv) => Math.max(highest, Number(kv.mod_revision)), 0);
}

/** Transactions against the cluster's keys (see the module comment). */
export class EtcdWrites {
  constructor(
    private readonly client: Etcd3,
    private readonly layout: EtcdLayout,
    private readonly feed: CatalogFeed,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Applies `change` to a copy of the view and commits the catalog document if it changed,
   * compared on the document's mod revision (and, for the master, on its election key).
   */
  async changeCatalog<T>(change: (draft: Catalog) => T, deadline: number, fence?: () => string | null): Promise<T> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (Date.now() > deadline) break;
      const base = this.feed.view.catalog;
      const baseRevision = this.feed.view.documentRevision;
      const draft = structuredClone(base) as Catalog;
      let result: T;
      try {
        result = change(draft);
      } catch (error) {
        if (await this.caughtUp(baseRevision, deadline).catch(() => true)) throw error;
        continue;
      }
      if (diffCatalogs(base, draft).length === 0) {
        if (fence || (await this.caughtUp(baseRevision, deadline).catch(() => true))) return result;
        continue;
      }
      const compare = [modEquals(this.layout.catalog, baseRevision)];
      const failure: IRequestOp[] = [{ request_range: { key: Buffer.from(this.layout.catalog) } }];
      const fenceKey = fence?.();
      if (fence && !fenceKey) throw new CatalogError('catalog_conflict', 'this node is not the master');
      if (fenceKey) {
        compare.push({ key: Buffer.from(fenceKey), target: 'Create', result: 'Greater', create_revision: 0 });
        failure.push({ request_range: { key: Buffer.from(fenceKey) } });
      }
      const response = await this.txn(compare, [put(this.layout.catalog, JSON.stringify(catalogDocument(draft)))], failure, deadline);
      if (response.succeeded) {
        await this.awaitView(Number(response.header.revision), deadline);
        return result;
      }
      if (fenceKey && readRevision(response, 1) === 0) throw new CatalogError('catalog_conflict', 'this node is no longer the master');
      await this.feed.waitForRevision(readRevision(response, 0), deadline - Date.now());
    }
    throw new CatalogError('catalog_unavailable', `the catalog change did not commit within ${this.timeoutMs} ms (concurrent changes or a slow etcd)`);
  }

  /**
   * A refusal or a no-op computed from the view stands only if the view was current: true when
   * etcd's catalog document is still at `baseRevision`, else waits for the view to reach it.
   * (When etcd cannot say, the callers answer from the last view, as reads do.)
   */
  private async caughtUp(baseRevision: number, deadline: number): Promise<boolean> {
    const response = await this.bounded(this.client.kv.range({ key: Buffer.from(this.layout.catalog), keys_only: true }, { deadline }), deadline);
    const latest = Number(response.kvs[0]?.mod_revision ?? 0);
    if (latest <= baseRevision) return true;
    await this.feed.waitForRevision(latest, deadline - Date.now());
    return false;
  }

  /** One etcd transaction, bounded by `deadline`. */
  txn(compare: ICompare[], success: IRequestOp[], failure: IRequestOp[], deadline: number): Promise<ITxnResponse> {
    return this.bounded(this.client.kv.txn({ compare, success, failure }, { deadline }), deadline);
  }

  /** `promise`, or catalog_unavailable once `deadline` passes. */
  bounded<T>(promise: Promise<T>, deadline: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new CatalogError('catalog_unavailable', `etcd did not answer within ${this.timeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    promise.catch(() => undefined);
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  /** Waits until the view has applied etcd revision `revision` (a committed change of ours). */
  async awaitView(revision: number, deadline: number): Promise<void> {
    if (await this.feed.waitForRevision(revision, Math.max(deadline - Date.now(), VIEW_GRACE_MS))) return;
    throw new CatalogError('catalog_unavailable', `the change committed at etcd revision ${revision}, but this node's catalog view has not caught up`);
  }

  /** Creates `apikeys/<id>` only if it does not exist; `resource_already_exists` otherwise. */
  async createApiKey(record: ApiKeyRecord, deadline: number): Promise<ApiKeyRecord> {
    const key = this.layout.apiKey(record.id);
    const response = await this.txn(
      [{ key: Buffer.from(key), target: 'Create', result: 'Equal', create_revision: 0 }],
      [put(key, JSON.stringify(record))],
      [{ request_range: { key: Buffer.from(key) } }],
      deadline,
    );
    if (!response.succeeded) {
      await this.feed.waitForRevision(readRevision(response, 0), deadline - Date.now());
      throw apiKeyExistsError(record.id);
    }
    await this.awaitView(Number(response.header.revision), deadline);
    return structuredClone(record);
  }

  /** One transaction: put only if no key exists under `apikeys/`, so one of racing nodes wins. */
  async createFirstApiKey(record: ApiKeyRecord, deadline: number): Promise<boolean> {
    const all = { key: Buffer.from(this.layout.apiKeys), range_end: prefixRangeEnd(this.layout.apiKeys) };
    const response = await this.txn(
      [{ ...all, target: 'Create', result: 'Equal', create_revision: 0 }],
      [put(this.layout.apiKey(record.id), JSON.stringify(record))],
      [{ request_range: { ...all, keys_only: true } }],
      deadline,
    );
    const seen = response.succeeded ? Number(response.header.revision) : readRevision(response, 0);
    await this.awaitView(seen, deadline);
    return response.succeeded;
  }

  /** Deletes `apikeys/<id>`; the deleted record, or null when there was none. */
  async deleteApiKey(id: string, deadline: number): Promise<ApiKeyRecord | null> {
    const key = this.layout.apiKey(id);
    const response = await this.txn([], [{ request_delete_range: { key: Buffer.from(key), prev_kv: true } }], [], deadline);
    const previous = response.responses[0]?.response_delete_range?.prev_kvs?.[0];
    if (!previous) return null;
    await this.awaitView(Number(response.header.revision), deadline);
    return parseApiKeyRecord(previous.value.toString('utf8'), key);
  }

  /** Batched: one transaction for every key whose time moves forward, compared on each key. */
  async recordApiKeyUse(lastUsed: ReadonlyMap<string, number>, deadline: number): Promise<void> {
    const known = new Map<string, { record: ApiKeyRecord; modRevision: number }>();
    for (const id of lastUsed.keys()) {
      const entry = this.feed.view.apiKeyEntry(id);
      if (entry) known.set(id, { record: entry.value, modRevision: entry.modRevision });
    }
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const apiKeys = Object.fromEntries([...known].map(([id, entry]) => [id, structuredClone(entry.record)]));
      recordApiKeyUseIn({ apiKeys }, lastUsed);
      const changed = [...known].filter(([id, entry]) => apiKeys[id].lastUsedAt !== entry.record.lastUsedAt);
      if (changed.length === 0) return;
      const keys = changed.map(([id]) => this.layout.apiKey(id));
      const response = await this.txn(
        changed.map(([, entry], index) => modEquals(keys[index], entry.modRevision)),
        changed.map(([id], index) => put(keys[index], JSON.stringify(apiKeys[id]))),
        keys.map((key) => ({ request_range: { key: Buffer.from(key) } })),
        deadline,
      );
      if (response.succeeded) return this.awaitView(Number(response.header.revision), deadline);
      changed.forEach(([id], index) => {
        const kv = response.responses[index]?.response_range?.kvs?.[0];
        if (kv) known.set(id, { record: parseApiKeyRecord(kv.value.toString('utf8'), keys[index]), modRevision: Number(kv.mod_revision) });
        else known.delete(id);
      });
    }
    throw new CatalogError('catalog_unavailable', 'API key use could not be recorded: too many concurrent changes');
  }
}

/** Puts `value` at `key` unless the key exists (one transaction); returns the stored value. */
export async function createOnce(client: Etcd3, key: string, value: string): Promise<string> {
  const response = await client.kv.txn({
    compare: [{ key: Buffer.from(key), target: 'Create', result: 'Equal', create_revision: 0 }],
    success: [put(key, value)],
    failure: [{ request_range: { key: Buffer.from(key) } }],
  });
  if (response.succeeded) return value;
  return response.responses[0].response_range.kvs[0].value.toString('utf8');
}
