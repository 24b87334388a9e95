/**
 * Name resolution of reads: what a target (`name`, `a,b*`, `_all`, an alias) selects, as the
 * collections this node has applied. An alias stands for its collections; a collection reached
 * only through aliases carries what they add to a read: their `filter` (ANDed into the query;
 * several aliases of one collection OR their filters, as Elasticsearch does) and the shards their
 * `search_routing` selects. A collection also named directly, or through an alias without a
 * filter (without routing), is read whole.
 */
import type { AliasMeta } from '../cluster/catalog.ts';
import type { HostedCollection } from '../cluster/local-shards.ts';
import { resolveTarget } from '../cluster/names.ts';
import { shardFor } from '../cluster/routing.ts';
import type { NodeContext } from './node-context.ts';
import { collectionNotFound } from './node-error.ts';

/** How a target's unknown names are treated. */
export interface ResolveOptions {
  /** ES `ignore_unavailable=true`: unknown concrete names are left out instead of index_not_found. */
  ignoreUnavailable?: boolean;
}

/** One collection a read goes to, with what its aliases add. */
export interface ReadTarget {
  hosted: HostedCollection;
  /** Query DSL ANDed into the read's query; null: none. */
  filter: Record<string, unknown> | null;
  /** The shard numbers the read is limited to; null: every shard. */
  shards: ReadonlySet<number> | null;
}

/** What the aliases selecting one collection add up to, while the target is resolved. */
interface Selection {
  hosted: HostedCollection;
  direct: boolean;
  aliases: AliasMeta[];
}

function readTargetOf(selection: Selection): ReadTarget {
  const { hosted, direct, aliases } = selection;
  const filters = aliases.map((alias) => alias.filter);
  const filtered = !direct && filters.every((filter) => filter !== undefined);
  const routed = !direct && aliases.every((alias) => alias.search_routing !== undefined);
  let shards: Set<number> | null = null;
  if (routed) {
    shards = new Set();
    for (const alias of aliases) {
      for (const value of alias.search_routing!.split(',')) shards.add(shardFor(value.trim(), hosted.meta.settings.number_of_shards));
    }
  }
  const filter = !filtered ? null : filters.length === 1 ? filters[0]! : { bool: { should: filters, minimum_should_match: 1 } };
  return { hosted, filter, shards };
}

/** The collections a read target selects, each once, with their alias filters and routing (see the module comment). */
export function resolveReadTargets(context: NodeContext, target: string, options: ResolveOptions = {}): ReadTarget[] {
  // The common case, one collection named as it is, without listing every collection and alias.
  if (isPlainName(target) && !context.router.aliases().has(target)) {
    const hosted = context.router.findCollection(target);
    if (hosted) return [{ hosted, filter: null, shards: null }];
  }
  const collections = new Map(context.router.collections().map((hosted) => [hosted.meta.name, hosted]));
  const aliases = context.router.aliases();
  const resolved = resolveTarget(target, [...collections.keys()], [...aliases.keys()]);
  if (resolved.missing.length > 0 && options.ignoreUnavailable !== true) throw collectionNotFound(resolved.missing[0]!);
  const selections = new Map<string, Selection>();
  const select = (name: string): Selection | undefined => {
    let selection = selections.get(name);
    const hosted = collections.get(name);
    if (!selection && hosted) selections.set(name, (selection = { hosted, direct: false, aliases: [] }));
    return selection;
  };
  for (const name of resolved.names) {
    const members = aliases.get(name);
    if (!members) {
      const selection = select(name);
      if (selection) selection.direct = true;
      continue;
    }
    for (const member of members) select(member.collection)?.aliases.push(member.alias);
  }
  return [...selections.values()].map(readTargetOf);
}

/** True for a target that can only be one name as it is: no list, wildcard, exclusion, `_all` or surrounding space. */
function isPlainName(target: string): boolean {
  return target !== '' && target !== '_all' && !target.startsWith('-') && !PATTERN_CHARACTERS.test(target);
}

const PATTERN_CHARACTERS = /[,*?\s]/;

/** The query of a read of `target`: `query` with the target's alias filter ANDed in (unchanged without one). */
export function filteredQuery(query: unknown, target: Pick<ReadTarget, 'filter'>): unknown {
  if (target.filter === null) return query;
  return { bool: { must: [query ?? { match_all: {} }], filter: [target.filter] } };
}
