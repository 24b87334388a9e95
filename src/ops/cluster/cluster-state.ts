/**
 * `GET /_cluster/state[/{sections}]`: the catalog view of the cluster, by section: `nodes` (the
 * registry), `namespaces`, `collections` (settings and mappings), `shards` (the routing table with
 * each copy's node and state), `master` (who owns the catalog) and `metadata` (cluster identity,
 * catalog revision, counts). A comma list of sections filters; `_all` is every section.
 */
import type { CopyState, HealthInputs } from './cluster-health.ts';
import { copyState } from './cluster-health.ts';
import { inSyncOf, primaryTermOf } from '../../cluster/catalog.ts';

/** Sections of the state, in response order. */
export const STATE_SECTIONS = ['nodes', 'namespaces', 'collections', 'shards', 'master', 'metadata'] as const;

/** One section name. */
export type StateSection = (typeof STATE_SECTIONS)[number];

/** A shard copy in the routing table. */
export interface CopyRouting {
  node: string | null;
  state: CopyState;
}

/** What the state needs beyond the health inputs. */
export interface StateInputs extends HealthInputs {
  /** Which coordinator owns the catalog. */
  coordinator: 'local' | 'etcd';
  /** The elected master node, or null while none is. */
  masterId: string | null;
}

/**
 * The sections a filter names (`collections,shards`, `_all`, or empty for all), or the names it
 * holds that are not sections.
 */
export function parseStateSections(filter: string | undefined): { sections: StateSection[] } | { unknown: string[] } {
  const names = (filter ?? '').split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (names.length === 0 || names.includes('_all')) return { sections: [...STATE_SECTIONS] };
  const unknown = names.filter((name) => !(STATE_SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) return { unknown };
  return { sections: STATE_SECTIONS.filter((section) => names.includes(section)) };
}

/** Builds the state with the given sections. */
export function clusterState(inputs: StateInputs, sections: readonly StateSection[]): Record<string, unknown> {
  const { catalog } = inputs;
  const allowed = inputs.allowsNamespace ?? (() => true);
  const collections = Object.values(catalog.collections)
    .filter((meta) => allowed(meta.namespace))
    .sort((left, right) => (left.name < right.name ? -1 : 1));
  const namespaces = Object.values(catalog.namespaces)
    .filter((namespace) => allowed(namespace.name))
    .sort((left, right) => (left.name < right.name ? -1 : 1));
  const state: Record<string, unknown> = { cluster_name: catalog.clusterName, cluster_uuid: catalog.clusterUuid, revision: catalog.revision };
  const builders: Record<StateSection, () => unknown> = {
    nodes: () =>
      Object.fromEntries(
        Object.values(catalog.nodes)
          .sort((left, right) => (left.id < right.id ? -1 : 1))
          .map((node) => [node.id, { name: node.name, address: node.address, version: node.version, roles: node.roles, started_at: new Date(node.startedAt).toISOString() }]),
      ),
    namespaces: () =>
      Object.fromEntries(
        namespaces.map((namespace) => [
          namespace.name,
          {
            uuid: namespace.uuid,
            created_at: new Date(namespace.createdAt).toISOString(),
            collections: collections.filter((meta) => meta.namespace === namespace.name).map((meta) => meta.name),
          },
        ]),
      ),
    collections: () =>
      Object.fromEntries(
        collections.map((meta) => [
          meta.name,
          {
            uuid: meta.uuid,
            namespace: meta.namespace,
            version: meta.version,
            created_at: new Date(meta.createdAt).toISOString(),
            settings: meta.settings,
            mappings: meta.mapping,
          },
        ]),
      ),
    shards: () =>
      Object.fromEntries(
        collections.map((meta) => [
          meta.name,
          Object.fromEntries(
            meta.placements.map((placement) => {
              const replicas: CopyRouting[] = placement.replicas.map((node) => ({ node, state: copyState(inputs, meta.name, placement.shard, node) }));
              while (replicas.length < meta.settings.number_of_replicas) replicas.push({ node: null, state: 'unassigned' });
              return [
                String(placement.shard),
                {
                  uuid: meta.shards[placement.shard]?.uuid ?? null,
                  primary: { node: placement.primary, state: copyState(inputs, meta.name, placement.shard, placement.primary) },
                  replicas,
                  primary_term: primaryTermOf(placement),
                  in_sync: inSyncOf(placement),
                },
              ];
            }),
          ),
        ]),
      ),
    master: () => ({
      node_id: inputs.masterId,
      coordinator: inputs.coordinator,
    }),
    metadata: () => ({
      cluster_uuid: catalog.clusterUuid,
      revision: catalog.revision,
      coordinator: inputs.coordinator,
      number_of_nodes: Object.keys(catalog.nodes).length,
      number_of_namespaces: namespaces.length,
      number_of_collections: collections.length,
    }),
  };
  for (const section of sections) state[section] = builders[section]();
  return state;
}
