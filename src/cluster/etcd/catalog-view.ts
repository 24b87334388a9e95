/**
 * The etcd coordinator's in-memory view: the values of the cluster's keys with their mod revisions
 * (what a compare-and-swap compares), and the `Catalog` they make, rebuilt and diffed once per
 * etcd revision. Fed by a full range read (`load`) or by watch events (`apply`); never reads etcd.
 */
import type { Logger } from 'pino';
import type { IEvent, IKeyValue } from 'etcd3';
import { deepFreeze, diffCatalogs, type ApiKeyRecord, type Catalog, type CatalogEvent, type NodeRecord } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { parseApiKeyRecord, parseCatalogDocument, parseNodeRecord, type CatalogDocument, type EtcdLayout } from './etcd-layout.ts';

/** A parsed value and the etcd revision that last wrote it. */
export interface Entry<T> {
  value: T;
  modRevision: number;
}

function sortedRecord<T>(entries: Map<string, Entry<T>>): Record<string, T> {
  const record: Record<string, T> = {};
  for (const key of [...entries.keys()].sort()) record[key] = entries.get(key)!.value;
  return record;
}

/** The catalog as this process last saw it in etcd. */
export class CatalogView {
  private document: Entry<CatalogDocument> | null = null;
  private readonly nodes = new Map<string, Entry<NodeRecord>>();
  private readonly apiKeys = new Map<string, Entry<ApiKeyRecord>>();
  /** Master election candidates: key → node id and create revision. */
  private readonly candidates = new Map<string, { nodeId: string; createRevision: number }>();
  private current: Catalog | null = null;
  /** Revision of the last change to the catalog (what `Coordinator.revision` reports). */
  revision = 0;
  /** Highest etcd revision whose events this view has applied (changes to the catalog or not). */
  appliedRevision = 0;

  constructor(
    private readonly layout: EtcdLayout,
    private readonly logger?: Logger,
  ) {}

  /** The catalog at `revision` (deeply frozen). */
  get catalog(): Catalog {
    if (this.current === null) throw new CatalogError('catalog_unavailable', 'the catalog has not been loaded from etcd');
    return this.current;
  }

  /** Mod revision of the `catalog` document. */
  get documentRevision(): number {
    return this.document?.modRevision ?? 0;
  }

  /**
   * The elected master: the candidate whose key was created first, as etcd's election defines it,
   * or null when no node campaigns.
   */
  get leader(): { key: string; nodeId: string } | null {
    let leader: { key: string; nodeId: string; createRevision: number } | null = null;
    for (const [key, candidate] of this.candidates) {
      if (leader === null || candidate.createRevision < leader.createRevision) leader = { key, ...candidate };
    }
    return leader === null ? null : { key: leader.key, nodeId: leader.nodeId };
  }

  /** An API key record and its mod revision, or undefined. */
  apiKeyEntry(id: string): Entry<ApiKeyRecord> | undefined {
    return this.apiKeys.get(id);
  }

  /**
   * Replaces the view with a full read of the prefix taken at `revision`. Returns the event that
   * takes watchers from the previous view to this one, or null on the first load or when nothing
   * changed. The first load refuses a damaged catalog document.
   */
  load(kvs: IKeyValue[], revision: number): CatalogEvent | null {
    const first = this.current === null;
    const previousDocument = this.document;
    this.document = null;
    this.nodes.clear();
    this.apiKeys.clear();
    this.candidates.clear();
    for (const kv of kvs) this.set(kv, first);
    if (this.document === null) {
      if (first) throw new CatalogError('catalog_unavailable', `${this.layout.catalog} is missing in etcd`);
      this.logger?.error({ key: this.layout.catalog }, 'the catalog document disappeared from etcd; keeping the last one seen');
      this.document = previousDocument;
    }
    this.appliedRevision = Math.max(this.appliedRevision, revision);
    if (first) {
      this.current = this.build(revision);
      this.revision = revision;
      return null;
    }
    return this.advance(revision);
  }

  /** Applies watch events (ascending revisions); returns one event per revision that changed the catalog. */
  apply(events: IEvent[]): CatalogEvent[] {
    const emitted: CatalogEvent[] = [];
    let index = 0;
    while (index < events.length) {
      const revision = Number(events[index].kv.mod_revision);
      let touched = false;
      for (; index < events.length && Number(events[index].kv.mod_revision) === revision; index++) {
        if (revision <= this.appliedRevision) continue;
        const event = events[index];
        touched = (event.type === 'Put' ? this.set(event.kv, false) : this.remove(event.kv.key.toString())) || touched;
      }
      if (revision <= this.appliedRevision) continue;
      this.appliedRevision = revision;
      if (!touched) continue;
      const event = this.advance(revision);
      if (event !== null) emitted.push(event);
    }
    return emitted;
  }

  /** Moves to a new catalog at `revision` if it differs from the current one. */
  private advance(revision: number): CatalogEvent | null {
    const before = this.catalog;
    const after = this.build(revision);
    const changes = diffCatalogs(before, after);
    if (changes.length === 0) return null;
    this.current = after;
    this.revision = revision;
    return { revision, catalog: after, changes };
  }

  private build(revision: number): Catalog {
    const document = this.document!.value;
    return deepFreeze({
      clusterName: this.layout.clusterName,
      clusterUuid: document.clusterUuid,
      revision,
      namespaces: document.namespaces,
      collections: document.collections,
      nodes: sortedRecord(this.nodes),
      apiKeys: sortedRecord(this.apiKeys),
      ...(document.clusterSettings === undefined ? {} : { clusterSettings: document.clusterSettings }),
    });
  }

  /** Records a put; true when the key belongs to the catalog. */
  private set(kv: IKeyValue, strict: boolean): boolean {
    const key = kv.key.toString();
    const kind = this.layout.classify(key);
    if (kind.kind === 'other') return false;
    if (kind.kind === 'candidate') {
      this.candidates.set(key, { nodeId: kv.value.toString('utf8'), createRevision: Number(kv.create_revision) });
      return false;
    }
    const modRevision = Number(kv.mod_revision);
    const text = kv.value.toString('utf8');
    try {
      if (kind.kind === 'catalog') this.document = { value: deepFreeze(parseCatalogDocument(text, key)), modRevision };
      else if (kind.kind === 'node') this.nodes.set(kind.id, { value: deepFreeze(parseNodeRecord(text, key)), modRevision });
      else this.apiKeys.set(kind.id, { value: deepFreeze(parseApiKeyRecord(text, key)), modRevision });
    } catch (error) {
      if (strict && kind.kind === 'catalog') throw error;
      this.logger?.error({ err: error, key }, 'ignoring a damaged value in etcd');
      return false;
    }
    return true;
  }

  /** Records a delete; true when the key belongs to the catalog. */
  private remove(key: string): boolean {
    const kind = this.layout.classify(key);
    if (kind.kind === 'candidate') this.candidates.delete(key);
    if (kind.kind === 'node') return this.nodes.delete(kind.id);
    if (kind.kind === 'apiKey') return this.apiKeys.delete(kind.id);
    if (kind.kind === 'catalog') {
      this.logger?.error({ key }, 'the catalog document was deleted from etcd; keeping the last one seen');
    }
    return false;
  }
}
