/**
 * The rules of alias changes on a catalog draft, shared by both coordinators (through
 * catalog-rules.ts and their `updateAliases`). A batch of actions applies in order to the draft
 * and is checked as a whole, so `POST /_aliases` is one catalog change or none. After every
 * change: an alias is never named like a collection (one namespace of names, as in
 * Elasticsearch), the collections of one alias are in one namespace (the alias belongs to it),
 * and an alias has at most one write index. A collection whose aliases change gets a new version.
 */
import type { AliasMeta, Catalog, CollectionMeta } from './catalog.ts';
import { CatalogError } from './catalog-error.ts';
import { buildAliasIndex } from './aliases.ts';
import { invalidNameReason, resolveTarget } from './names.ts';

/** One parsed action of `POST /_aliases` (index and alias expressions may hold wildcards where ES allows them). */
export type AliasAction =
  | { kind: 'add'; indices: string[]; aliases: string[]; alias: AliasMeta }
  | { kind: 'remove'; indices: string[]; aliases: string[]; mustExist?: boolean }
  | { kind: 'remove_index'; indices: string[] };

/** The collections an index expression list selects in the draft; a missing concrete name is index_not_found. */
function selectCollections(draft: Catalog, expressions: readonly string[]): CollectionMeta[] {
  const resolved = resolveTarget(expressions.join(','), Object.keys(draft.collections).sort());
  if (resolved.missing.length > 0) throw new CatalogError('index_not_found', `no such index [${resolved.missing[0]}]`);
  return resolved.names.map((name) => draft.collections[name]!);
}

/** Refuses an alias name that breaks the index name rules (ES `invalid_alias_name_exception`). */
function checkAliasName(name: string): void {
  const reason = invalidNameReason(name);
  if (reason !== null) throw new CatalogError('invalid_alias_name', `Invalid alias name [${name}]: ${reason}`);
}

function applyAction(draft: Catalog, action: AliasAction, removed: CollectionMeta[]): void {
  if (action.kind === 'remove_index') {
    for (const collection of selectCollections(draft, action.indices)) {
      delete draft.collections[collection.name];
      removed.push(collection);
    }
    return;
  }
  const collections = selectCollections(draft, action.indices);
  if (action.kind === 'add') {
    for (const name of action.aliases) checkAliasName(name);
    for (const collection of collections) {
      const aliases = (collection.aliases ??= {});
      for (const name of action.aliases) aliases[name] = structuredClone(action.alias);
    }
    return;
  }
  let matched = 0;
  for (const collection of collections) {
    const own = Object.keys(collection.aliases ?? {});
    const selected = resolveTarget(action.aliases.join(','), own).names;
    for (const name of selected) delete collection.aliases![name];
    matched += selected.length;
    if (collection.aliases && Object.keys(collection.aliases).length === 0) delete collection.aliases;
  }
  if (matched === 0 && action.mustExist !== false) {
    throw new CatalogError('alias_not_found', `aliases [${action.aliases.join(',')}] missing`);
  }
}

/** Throws unless the draft keeps the invariants of the module comment. */
export function checkAliasInvariants(draft: Catalog): void {
  for (const [name, members] of buildAliasIndex(Object.values(draft.collections))) {
    if (Object.hasOwn(draft.collections, name)) {
      throw new CatalogError('invalid_alias_name', `Invalid alias name [${name}]: an index or data stream exists with the same name as the alias`);
    }
    // Names no namespace: a key limited to one must not learn another's name from the refusal.
    if (new Set(members.map((member) => member.namespace)).size > 1) {
      throw new CatalogError('illegal_argument', `alias [${name}] would point to collections of several namespaces; an alias belongs to the one namespace of its collections`);
    }
    const writers = members.filter((member) => member.alias.is_write_index === true).map((member) => member.collection);
    if (writers.length > 1) throw new CatalogError('illegal_argument', `alias [${name}] has more than one write index [${writers.join(',')}]`);
    const hidden = members.filter((member) => member.alias.is_hidden === true).map((member) => member.collection);
    if (hidden.length > 0 && hidden.length < members.length) {
      const shown = members.filter((member) => member.alias.is_hidden !== true).map((member) => member.collection);
      throw new CatalogError(
        'illegal_argument',
        `alias [${name}] has is_hidden set to true on indices [${hidden.join(',')}] but does not have is_hidden set to true on indices [${shown.join(',')}]; alias must have the same is_hidden setting on all indices`,
      );
    }
  }
}

/** Bumps the version of every draft collection whose aliases differ from `before`'s. */
function bumpChanged(before: Catalog, draft: Catalog): void {
  for (const collection of Object.values(draft.collections)) {
    const previous = Object.hasOwn(before.collections, collection.name) ? before.collections[collection.name] : undefined;
    if (previous && JSON.stringify(previous.aliases ?? {}) !== JSON.stringify(collection.aliases ?? {})) collection.version = previous.version + 1;
  }
}

/**
 * Applies `actions` in order, all or nothing (a refusal throws before the caller persists the
 * draft); returns the collections `remove_index` took out of the catalog.
 */
export function updateAliasesIn(draft: Catalog, actions: readonly AliasAction[]): CollectionMeta[] {
  if (actions.length === 0) throw new CatalogError('illegal_argument', 'Validation Failed: 1: no actions specified;');
  const before = structuredClone(draft);
  const removed: CollectionMeta[] = [];
  for (const action of actions) applyAction(draft, action, removed);
  checkAliasInvariants(draft);
  bumpChanged(before, draft);
  return removed;
}

/**
 * The aliases a restored collection keeps: those that still fit the live catalog. An alias whose
 * name a collection took meanwhile (or the restored one takes, renamed), or whose other collections are now in another namespace, is
 * dropped; a write index whose alias has another write index now comes back as a plain member.
 */
export function fitRestoredAliases(draft: Catalog, restored: CollectionMeta): void {
  if (!restored.aliases) return;
  const live = buildAliasIndex(Object.values(draft.collections).filter((collection) => collection.name !== restored.name));
  for (const [name, alias] of Object.entries(restored.aliases)) {
    const members = live.get(name) ?? [];
    const nameTaken = name === restored.name || Object.hasOwn(draft.collections, name);
    if (nameTaken || members.some((member) => member.namespace !== restored.namespace)) {
      delete restored.aliases[name];
    } else if (alias.is_write_index === true && members.some((member) => member.alias.is_write_index === true)) {
      restored.aliases[name] = { ...alias, is_write_index: false };
    }
  }
  if (Object.keys(restored.aliases).length === 0) delete restored.aliases;
}
