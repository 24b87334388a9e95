/**
 * What an authenticated request may reach: the caller (`Principal`) and, for a key limited to
 * namespaces, the checks and filters that keep it inside them. Every request carries one as
 * `request.authScope`; routes use it to refuse a namespace (`requireNamespace`) and to filter
 * listings (`allows`, `allowsCollection`). Collections are looked up in the coordinator's
 * catalog view, so a collection's namespace is always the current one.
 *
 * A collection that does not exist is not refused here: the route answers 404 as it would for
 * any caller. A key limited to namespaces therefore learns whether a name outside them exists
 * (403 vs 404), never what it holds, nor in which namespace: a 403 names only the key's own
 * namespaces and says the rest is "outside the key's namespaces".
 */
import type { Coordinator } from '../../cluster/coordinator.ts';
import { aliasIndexOf } from '../../cluster/aliases.ts';
import { resolveTarget } from '../../cluster/names.ts';
import type { AuthCounters } from '../../ops/security/auth-counters.ts';
import { SecurityError } from '../../ops/security/security-error.ts';
import type { Role } from '../roles.ts';

/** Who sent a request. */
export interface Principal {
  /** `api_key`: a key from the catalog; `node`: another node of the cluster; `anonymous`: security is disabled. */
  kind: 'api_key' | 'node' | 'anonymous';
  /** Key id or node id; empty for `anonymous`. */
  id: string;
  /** Key name (for messages and logs). */
  name: string;
  role: Role;
  /** Namespaces the caller is limited to; null for all. */
  namespaces: readonly string[] | null;
}

/**
 * A target expression that selects no collection whatever exists (`*` then exclude `*`, the
 * Elasticsearch idiom): what a wildcard becomes when a limited key may see nothing it matches.
 */
export const EMPTY_TARGET = '*,-*';

function isWildcardPart(part: string): boolean {
  return part === '_all' || part.includes('*') || part.includes('?');
}

/** See the module comment. */
export class AuthScope {
  private readonly namespaceSet: ReadonlySet<string> | null;

  constructor(
    readonly principal: Principal,
    private readonly coordinator: Coordinator,
    private readonly counters: AuthCounters,
  ) {
    this.namespaceSet = principal.namespaces === null ? null : new Set(principal.namespaces);
  }

  /** True when the caller may reach every namespace. */
  get unrestricted(): boolean {
    return this.namespaceSet === null;
  }

  /** True when the caller may reach namespace `namespace`. */
  allows(namespace: string): boolean {
    return this.namespaceSet === null || this.namespaceSet.has(namespace);
  }

  /** For listings: true when the collection exists in a namespace the caller may reach (always true when unrestricted). */
  allowsCollection(name: string): boolean {
    if (this.namespaceSet === null) return true;
    const collection = this.coordinator.getCollection(name);
    return collection !== null && this.namespaceSet.has(collection.namespace);
  }

  /**
   * For records of a collection that may have been deleted or re-created since (jobs): `allowed`
   * when the caller may see it (always, unrestricted), `outside` when exactly that collection
   * (same UUID) exists in a namespace the caller may not reach (refuse it as `requireCollection`
   * does), `gone` when it no longer exists as such: its namespace is unknown, so a limited caller
   * must not see the record at all.
   */
  recordAccess(name: string, uuid: string): 'allowed' | 'outside' | 'gone' {
    if (this.namespaceSet === null) return 'allowed';
    const collection = this.coordinator.getCollection(name);
    if (collection === null || collection.uuid !== uuid) return 'gone';
    return this.namespaceSet.has(collection.namespace) ? 'allowed' : 'outside';
  }

  /**
   * Refuses (403) a namespace the caller may not reach. The reason does not name it: callers
   * pass namespaces found on other records (a trash item, another key), not only requested ones.
   */
  requireNamespace(namespace: string): void {
    if (this.allows(namespace)) return;
    throw this.denied('the namespace concerned is outside the key\'s namespaces');
  }

  /**
   * Refuses (403) an existing collection, or alias, in a namespace the caller may not reach (an
   * alias belongs to the namespace of its collections).
   */
  requireCollection(name: string): void {
    if (this.namespaceSet === null) return;
    const namespace = this.coordinator.getCollection(name)?.namespace ?? this.aliasNamespace(name);
    if (namespace !== undefined && !this.namespaceSet.has(namespace)) {
      throw this.denied(`collection [${name}] is outside the key's namespaces`);
    }
  }

  /** `requireCollection` for each name (the collections a scroll or point-in-time id names); bound, so it can be passed on. */
  readonly requireCollections = (names: readonly string[]): void => {
    for (const name of names) this.requireCollection(name);
  };

  /** The namespace of alias `name`, or undefined when no alias has that name. */
  aliasNamespace(name: string): string | undefined {
    return aliasIndexOf(this.coordinator.catalog().collections).get(name)?.[0]?.namespace;
  }

  /** Refuses (403) an operation that reaches every namespace at once, for a caller limited to some. */
  requireUnrestricted(action: string): void {
    if (this.namespaceSet === null) return;
    throw this.denied(`[${action}] reaches every namespace`);
  }

  /**
   * Checks a comma list of concrete collection names (a route that takes one collection, or a
   * delete). Wildcards are refused for a limited caller: only routes that resolve targets (see
   * `narrowTarget`) may expand them, and there they are narrowed to what the caller may see.
   */
  requireConcreteCollections(target: string): void {
    if (this.namespaceSet === null) return;
    for (const part of target.split(',')) {
      const name = part.trim();
      if (name === '') continue;
      if (isWildcardPart(name)) throw this.denied(`the wildcard expression [${name}] could reach collections outside them`);
      this.requireCollection(name);
    }
  }

  /**
   * A search-style target (`a,b*`, `*`, `_all`, `-x` exclusions) limited to what the caller may
   * see: concrete names outside its namespaces are refused (403), missing ones are kept (the
   * route answers 404), and wildcards are replaced by the visible collections they match.
   * Unchanged for an unrestricted caller.
   */
  narrowTarget(target: string): string {
    if (this.namespaceSet === null) return target;
    let wildcard = false;
    for (const part of target.split(',')) {
      const name = part.trim();
      if (name === '' || name.startsWith('-')) continue;
      if (isWildcardPart(name)) wildcard = true;
      else this.requireCollection(name);
    }
    if (!wildcard) return target;
    const visible = this.coordinator
      .listCollections()
      .filter((collection) => this.namespaceSet!.has(collection.namespace))
      .map((collection) => collection.name);
    const visibleAliases = [...aliasIndexOf(this.coordinator.catalog().collections)]
      .filter(([, members]) => this.namespaceSet!.has(members[0]!.namespace))
      .map(([name]) => name);
    const resolved = resolveTarget(target, visible, visibleAliases);
    const names = [...resolved.names, ...resolved.missing];
    return names.length > 0 ? names.join(',') : EMPTY_TARGET;
  }

  /** Counts and builds the 403 for a namespace the caller may not reach. */
  private denied(what: string): SecurityError {
    this.counters.authorizationFailed('namespace');
    return new SecurityError('security_forbidden', `${describePrincipal(this.principal)} is limited to namespaces [${(this.principal.namespaces ?? []).join(', ')}]; ${what}`);
  }
}

/** `API key [name] (id [id])`, `node [id]` or `anonymous` for messages and logs. */
export function describePrincipal(principal: Principal): string {
  if (principal.kind === 'api_key') return `API key [${principal.name}] (id [${principal.id}])`;
  if (principal.kind === 'node') return `node [${principal.id}]`;
  return 'anonymous';
}
