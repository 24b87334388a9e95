/**
 * Aliases as the catalog holds them: each collection lists its own (`CollectionMeta.aliases`),
 * as Elasticsearch keeps aliases in each index's metadata. This module turns those lists into the
 * alias → collections view that name resolution needs, and answers which collection a write
 * through an alias goes to.
 */
import type { AliasMeta, CollectionMeta } from './catalog.ts';
import { CatalogError } from './catalog-error.ts';

/** One collection an alias points to, with the alias's properties on it. */
export interface AliasMember {
  collection: string;
  namespace: string;
  alias: AliasMeta;
}

/** Alias name → its collections (sorted by collection name). */
export type AliasIndex = ReadonlyMap<string, readonly AliasMember[]>;

/** The alias view of `collections`. */
export function buildAliasIndex(collections: Iterable<CollectionMeta>): AliasIndex {
  const index = new Map<string, AliasMember[]>();
  for (const collection of collections) {
    for (const [name, alias] of Object.entries(collection.aliases ?? {})) {
      const members = index.get(name) ?? [];
      members.push({ collection: collection.name, namespace: collection.namespace, alias });
      index.set(name, members);
    }
  }
  for (const members of index.values()) members.sort((left, right) => (left.collection < right.collection ? -1 : left.collection > right.collection ? 1 : 0));
  return index;
}

const cached = new WeakMap<object, AliasIndex>();

/** `buildAliasIndex` of a frozen catalog's collections, computed once per catalog snapshot. */
export function aliasIndexOf(collections: Readonly<Record<string, CollectionMeta>>): AliasIndex {
  let index = cached.get(collections);
  if (!index) {
    index = buildAliasIndex(Object.values(collections));
    if (Object.isFrozen(collections)) cached.set(collections, index);
  }
  return index;
}

/**
 * The member a write through alias `name` goes to: its only collection, else its write index;
 * illegal_argument (Elasticsearch's words) when it has several and none is the write index.
 */
export function writeMember(name: string, members: readonly AliasMember[]): AliasMember {
  const writer = members.find((member) => member.alias.is_write_index === true);
  if (writer) return writer;
  if (members.length === 1 && members[0]!.alias.is_write_index !== false) return members[0]!;
  throw new CatalogError(
    'illegal_argument',
    `no write index is defined for alias [${name}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index`,
  );
}
