/**
 * The alias APIs (Elasticsearch's `_alias` and `_aliases`): bodies parsed into the actions of
 * src/cluster/alias-rules.ts, each request one catalog change through the coordinator, and the
 * views of `GET /_alias`, `GET /{collection}` and `_cat/aliases`. A filter is checked as a query
 * against every collection it goes on before anything changes.
 */
import type { AliasAction } from '../cluster/alias-rules.ts';
import type { AliasMeta, CollectionMeta } from '../cluster/catalog.ts';
import { resolveTarget } from '../cluster/names.ts';
import { EngineError } from '../engine/errors.ts';
import { isPlainObject } from '../engine/mapping/json-value.ts';
import { parseQuery } from '../engine/query/parse-query.ts';
import type { NodeContext } from './node-context.ts';
import { asNodeError, collectionNotFound } from './node-error.ts';

/** Acknowledgement of an alias change. */
export interface AliasesAcknowledged {
  acknowledged: true;
}

const PROPERTY_KEYS = ['filter', 'routing', 'index_routing', 'search_routing', 'is_write_index', 'is_hidden'];

function readString(value: unknown, name: string, owner: string): string {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number') return String(value);
  throw new EngineError('parsing', `[${owner}] [${name}] must be a non-empty string`);
}

/** The alias properties of a body (`filter`, `routing`, `index_routing`, `search_routing`, `is_write_index`, `is_hidden`); unknown keys are refused unless `extra` allows them. */
export function parseAliasProperties(body: Record<string, unknown>, owner: string, extra: readonly string[] = []): AliasMeta {
  for (const key of Object.keys(body)) {
    if (!PROPERTY_KEYS.includes(key) && !extra.includes(key)) throw new EngineError('parsing', `[${owner}] unknown field [${key}]`);
  }
  const alias: AliasMeta = {};
  if (body.filter !== undefined) {
    if (!isPlainObject(body.filter)) throw new EngineError('parsing', `[${owner}] [filter] must be an object`);
    alias.filter = body.filter;
  }
  if (body.routing !== undefined) alias.index_routing = alias.search_routing = readString(body.routing, 'routing', owner);
  if (body.index_routing !== undefined) alias.index_routing = readString(body.index_routing, 'index_routing', owner);
  if (body.search_routing !== undefined) alias.search_routing = readString(body.search_routing, 'search_routing', owner);
  if (alias.index_routing?.includes(',')) throw new EngineError('illegal_argument', `alias [${owner}] has several index routing values associated with it`);
  if (body.is_write_index !== undefined) {
    if (typeof body.is_write_index !== 'boolean') throw new EngineError('parsing', `[${owner}] [is_write_index] must be a boolean`);
    alias.is_write_index = body.is_write_index;
  }
  if (body.is_hidden !== undefined) {
    if (typeof body.is_hidden !== 'boolean') throw new EngineError('parsing', `[${owner}] [is_hidden] must be a boolean`);
    alias.is_hidden = body.is_hidden;
  }
  return alias;
}

/** Checks an alias filter as a query against each collection the expressions select (a bad one is the query's 400). */
function checkFilter(context: NodeContext, alias: AliasMeta, indices: readonly string[]): void {
  if (alias.filter === undefined) return;
  const collections = context.router.collections();
  const names = resolveTarget(indices.join(','), collections.map((hosted) => hosted.meta.name)).names;
  for (const hosted of collections) if (names.includes(hosted.meta.name)) parseQuery(alias.filter, hosted.fields);
}

function stringList(value: unknown, name: string, owner: string): string[] {
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) throw new EngineError('action_request_validation', `Validation Failed: 1: [${name}] can't be empty;`);
  return values.map((item) => readString(item, name, owner));
}

/** `index`/`indices` (and `alias`/`aliases`) of an action: one of the pair, as a list. */
function namesOf(body: Record<string, unknown>, single: string, plural: string, owner: string): string[] {
  if (body[single] !== undefined && body[plural] !== undefined) throw new EngineError('illegal_argument', `[${owner}] takes either [${single}] or [${plural}], not both`);
  const value = body[single] ?? body[plural];
  if (value === undefined) throw new EngineError('action_request_validation', `Validation Failed: 1: One of [${single}] or [${plural}] is required;`);
  return stringList(value, body[single] !== undefined ? single : plural, owner);
}

/** Parses the body of `POST /_aliases` (`{actions: [{add|remove|remove_index: {...}}]}`). */
export function parseAliasActions(context: NodeContext, body: unknown): AliasAction[] {
  if (!isPlainObject(body)) throw new EngineError('parsing', 'the _aliases body must be a JSON object');
  for (const key of Object.keys(body)) if (key !== 'actions') throw new EngineError('parsing', `[aliases] unknown field [${key}]`);
  if (!Array.isArray(body.actions)) throw new EngineError('parsing', '[actions] must be an array');
  return body.actions.map((entry): AliasAction => {
    if (!isPlainObject(entry) || Object.keys(entry).length !== 1) throw new EngineError('parsing', 'each alias action must be an object with one of [add], [remove], [remove_index]');
    const [kind, action] = Object.entries(entry)[0]!;
    if (!isPlainObject(action)) throw new EngineError('parsing', `[${kind}] must be an object`);
    if (kind === 'add') {
      const indices = namesOf(action, 'index', 'indices', kind);
      const aliases = namesOf(action, 'alias', 'aliases', kind);
      const alias = parseAliasProperties(action, kind, ['index', 'indices', 'alias', 'aliases']);
      checkFilter(context, alias, indices);
      return { kind, indices, aliases, alias };
    }
    if (kind === 'remove') {
      for (const key of Object.keys(action)) {
        if (!['index', 'indices', 'alias', 'aliases', 'must_exist'].includes(key)) throw new EngineError('parsing', `[remove] unknown field [${key}]`);
      }
      if (action.must_exist !== undefined && typeof action.must_exist !== 'boolean') throw new EngineError('parsing', '[remove] [must_exist] must be a boolean');
      return { kind, indices: namesOf(action, 'index', 'indices', kind), aliases: namesOf(action, 'alias', 'aliases', kind), mustExist: action.must_exist as boolean | undefined };
    }
    if (kind === 'remove_index') {
      for (const key of Object.keys(action)) if (key !== 'index' && key !== 'indices') throw new EngineError('parsing', `[remove_index] unknown field [${key}]`);
      return { kind, indices: namesOf(action, 'index', 'indices', kind) };
    }
    throw new EngineError('parsing', `unknown alias action [${kind}]; valid actions: [add, remove, remove_index]`);
  });
}

/** Parses the `aliases` of a create-collection body (`{name: {filter?, routing?, ...}}`). */
export function parseCreateAliases(value: unknown): Record<string, AliasMeta> {
  if (!isPlainObject(value)) throw new EngineError('parsing', '[aliases] must be an object');
  const aliases: Record<string, AliasMeta> = {};
  for (const [name, body] of Object.entries(value)) {
    if (!isPlainObject(body)) throw new EngineError('parsing', `[aliases] [${name}] must be an object`);
    aliases[name] = parseAliasProperties(body, name);
  }
  return aliases;
}

/** Checks the filters of a new collection's aliases against its mapping's fields. */
export function checkCreateAliasFilters(aliases: Record<string, AliasMeta>, fields: Parameters<typeof parseQuery>[1]): void {
  for (const alias of Object.values(aliases)) if (alias.filter !== undefined) parseQuery(alias.filter, fields);
}

/** Applies actions as one catalog change and waits until this node applied it. */
export async function applyAliasActions(context: NodeContext, actions: readonly AliasAction[]): Promise<CollectionMeta[]> {
  let removed: CollectionMeta[];
  try {
    removed = await context.coordinator.updateAliases(actions);
  } catch (error) {
    throw asNodeError(error);
  }
  await context.router.waitForRevision(context.coordinator.revision);
  return removed;
}

/** The collections a `remove_index` of `actions` names (concrete names only), for the trash to record first. */
export function removedByActions(context: NodeContext, actions: readonly AliasAction[]): string[] {
  const names: string[] = [];
  for (const action of actions) {
    if (action.kind !== 'remove_index') continue;
    for (const name of action.indices) {
      if (name.includes('*') || name.includes('?') || name === '_all') {
        throw new EngineError('illegal_argument', `[remove_index] takes concrete collection names, got [${name}]`);
      }
      if (!context.router.collections().some((hosted) => hosted.meta.name === name)) throw collectionNotFound(name);
      if (!names.includes(name)) names.push(name);
    }
  }
  return names;
}

/**
 * `PUT /{target}/_alias/{name}` (also `PUT /_alias/{name}`, `PUT /{target}/_alias`, `PUT /_alias`):
 * one `add` action; the body's `index`/`indices` and `alias`/`aliases` name what the path does not
 * (and win over it, as in Elasticsearch).
 */
export function putAliasAction(context: NodeContext, target: string | undefined, name: string | undefined, body: unknown): AliasAction {
  const properties = body === undefined || body === null ? {} : body;
  if (!isPlainObject(properties)) throw new EngineError('parsing', 'the alias body must be a JSON object');
  const named = (single: string, plural: string, path: string | undefined): string[] =>
    properties[single] !== undefined || properties[plural] !== undefined || path === undefined ? namesOf(properties, single, plural, name ?? 'alias') : path.split(',');
  const indices = named('index', 'indices', target);
  const aliases = named('alias', 'aliases', name);
  const alias = parseAliasProperties(properties, aliases.join(','), ['index', 'indices', 'alias', 'aliases']);
  checkFilter(context, alias, indices);
  return { kind: 'add', indices, aliases, alias };
}

/** What `GET /_alias` answers: the body, and 404 when a concrete alias name matched nothing (ES's `error` string then). */
export interface AliasesView {
  status: 200 | 404;
  body: Record<string, unknown>;
}

/**
 * `GET [/{target}]/_alias[/{names}]`: per selected collection, its aliases (those matching
 * `names`). Without `names` every selected collection is listed, with `aliases: {}` when it has
 * none; with `names`, only the collections that have a matching alias. `visible` limits the
 * collections to those the caller may see.
 */
export function getAliases(context: NodeContext, target: string | undefined, names: string | undefined, visible: (collection: string) => boolean): AliasesView {
  const collections = context.router.collections().filter((hosted) => visible(hosted.meta.name));
  let selected = collections;
  if (target !== undefined) {
    const resolved = resolveTarget(target, collections.map((hosted) => hosted.meta.name), [...context.router.aliases().keys()]);
    if (resolved.missing.length > 0) throw collectionNotFound(resolved.missing[0]!);
    const expanded = new Set(resolved.names.flatMap((name) => context.router.aliases().get(name)?.map((member) => member.collection) ?? [name]));
    selected = collections.filter((hosted) => expanded.has(hosted.meta.name));
  }
  const body: Record<string, unknown> = {};
  const found = new Set<string>();
  for (const hosted of selected) {
    const own = hosted.meta.aliases ?? {};
    const matching = names === undefined ? Object.keys(own) : resolveTarget(names, Object.keys(own)).names;
    matching.forEach((name) => found.add(name));
    if (names !== undefined && matching.length === 0) continue;
    body[hosted.meta.name] = { aliases: Object.fromEntries(matching.sort().map((name) => [name, own[name]])) };
  }
  const missing = names === undefined ? [] : names.split(',').map((name) => name.trim()).filter((name) => name !== '' && !/[*?]/.test(name) && name !== '_all' && !name.startsWith('-') && !found.has(name));
  if (missing.length === 0) return { status: 200, body };
  return { status: 404, body: { error: `alias${missing.length > 1 ? 'es' : ''} [${missing.join(',')}] missing`, status: 404, ...body } };
}

/** One `_cat/aliases` row. */
export interface AliasRow {
  alias: string;
  index: string;
  filter: string;
  'routing.index': string;
  'routing.search': string;
  is_write_index: string;
}

/** Every alias of the visible collections, as `_cat/aliases` lists them (sorted by alias, then collection). */
export function aliasRows(context: NodeContext, visible: (collection: string) => boolean): AliasRow[] {
  const rows: AliasRow[] = [];
  for (const [name, members] of [...context.router.aliases()].sort(([left], [right]) => (left < right ? -1 : 1))) {
    for (const member of members) {
      if (!visible(member.collection)) continue;
      rows.push({
        alias: name,
        index: member.collection,
        filter: member.alias.filter === undefined ? '-' : '*',
        'routing.index': member.alias.index_routing ?? '-',
        'routing.search': member.alias.search_routing ?? '-',
        is_write_index: member.alias.is_write_index === undefined ? '-' : String(member.alias.is_write_index),
      });
    }
  }
  return rows;
}
