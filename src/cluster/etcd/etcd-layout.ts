/**
 * Where the etcd coordinator keeps what, under `/trove/<cluster.name>/` (docs/formats/etcd.md):
 * `catalog` (one JSON document: identity, namespaces, collections), `apikeys/<id>`, `nodes/<id>`
 * (bound to the node's lease), `secret`, and `election/master/<lease>` (etcd3's election).
 */
import type { ApiKeyRecord, Catalog, ClusterSettingsMeta, CollectionMeta, NamespaceMeta, NodeRecord } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';

/** Value of the catalog document's `format` field. */
export const ETCD_CATALOG_FORMAT = 'trove-etcd-catalog';
/** Current version of the catalog document; readers refuse newer versions. */
export const ETCD_CATALOG_VERSION = 1;
/** Name of the master election (keys under `election/<name>/`). */
export const MASTER_ELECTION = 'master';

/** The `catalog` key's value. */
export interface CatalogDocument {
  format: typeof ETCD_CATALOG_FORMAT;
  version: number;
  clusterName: string;
  clusterUuid: string;
  namespaces: Record<string, NamespaceMeta>;
  collections: Record<string, CollectionMeta>;
  /** Absent when no cluster setting is set. */
  clusterSettings?: ClusterSettingsMeta;
}

/** What a key under the cluster prefix holds. */
export type KeyKind =
  | { kind: 'catalog' }
  | { kind: 'apiKey'; id: string }
  | { kind: 'node'; id: string }
  | { kind: 'candidate' }
  | { kind: 'other' };

/** The keys of one cluster. */
export class EtcdLayout {
  /** `/trove/<clusterName>/`. */
  readonly prefix: string;
  readonly catalog: string;
  readonly secret: string;
  readonly apiKeys: string;
  readonly nodes: string;
  /** Prefix of the master election's candidate keys (etcd3 puts them at `election/<name>/<lease>`). */
  readonly candidates: string;

  constructor(readonly clusterName: string) {
    if (clusterName === '' || clusterName.includes('/')) {
      throw new CatalogError('illegal_argument', `cluster.name must be non-empty and contain no '/', got [${clusterName}]`);
    }
    this.prefix = `/trove/${clusterName}/`;
    this.catalog = `${this.prefix}catalog`;
    this.secret = `${this.prefix}secret`;
    this.apiKeys = `${this.prefix}apikeys/`;
    this.nodes = `${this.prefix}nodes/`;
    this.candidates = `${this.prefix}election/${MASTER_ELECTION}/`;
  }

  apiKey(id: string): string {
    return `${this.apiKeys}${id}`;
  }

  node(id: string): string {
    return `${this.nodes}${id}`;
  }

  /** Classifies a full key read from etcd. */
  classify(key: string): KeyKind {
    if (key === this.catalog) return { kind: 'catalog' };
    if (key.startsWith(this.apiKeys)) return { kind: 'apiKey', id: key.slice(this.apiKeys.length) };
    if (key.startsWith(this.nodes)) return { kind: 'node', id: key.slice(this.nodes.length) };
    if (key.startsWith(this.candidates)) return { kind: 'candidate' };
    return { kind: 'other' };
  }
}

/** The end of the etcd range holding every key that starts with `prefix`. */
export function prefixRangeEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  for (let index = end.length - 1; index >= 0; index--) {
    if (end[index] < 0xff) {
      end[index] += 1;
      return end.subarray(0, index + 1);
    }
  }
  return Buffer.from([0]);
}

/** The catalog document holding `catalog`'s identity, namespaces and collections. */
export function catalogDocument(catalog: Catalog): CatalogDocument {
  return {
    format: ETCD_CATALOG_FORMAT,
    version: ETCD_CATALOG_VERSION,
    clusterName: catalog.clusterName,
    clusterUuid: catalog.clusterUuid,
    namespaces: catalog.namespaces,
    collections: catalog.collections,
    ...(catalog.clusterSettings === undefined ? {} : { clusterSettings: catalog.clusterSettings }),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CatalogError('catalog_unavailable', `${what} in etcd is damaged: ${(error as Error).message}`);
  }
}

/** Parses and checks the `catalog` value; a damaged or newer document is catalog_unavailable. */
export function parseCatalogDocument(text: string, key: string): CatalogDocument {
  const value = parseJson(text, key);
  const damaged = (what: string): CatalogError => new CatalogError('catalog_unavailable', `${key} in etcd is damaged: ${what}`);
  if (!isRecord(value)) throw damaged('the document is not an object');
  if (value.format !== ETCD_CATALOG_FORMAT) throw damaged(`unexpected format ${JSON.stringify(value.format)}`);
  if (typeof value.version !== 'number' || value.version > ETCD_CATALOG_VERSION) {
    throw damaged(`unsupported format version ${JSON.stringify(value.version)} (this build reads ${ETCD_CATALOG_VERSION})`);
  }
  if (typeof value.clusterUuid !== 'string' || typeof value.clusterName !== 'string') throw damaged('missing cluster identity');
  if (!isRecord(value.namespaces) || !isRecord(value.collections)) throw damaged('missing namespaces or collections');
  return value as unknown as CatalogDocument;
}

/** Parses a `nodes/<id>` value. */
export function parseNodeRecord(text: string, key: string): NodeRecord {
  const value = parseJson(text, key);
  if (!isRecord(value) || typeof value.id !== 'string' || typeof value.startedAt !== 'number') {
    throw new CatalogError('catalog_unavailable', `${key} in etcd is not a node record`);
  }
  return value as unknown as NodeRecord;
}

/** Parses an `apikeys/<id>` value. */
export function parseApiKeyRecord(text: string, key: string): ApiKeyRecord {
  const value = parseJson(text, key);
  if (!isRecord(value) || typeof value.id !== 'string' || typeof value.hash !== 'string') {
    throw new CatalogError('catalog_unavailable', `${key} in etcd is not an API key record`);
  }
  return value as unknown as ApiKeyRecord;
}
