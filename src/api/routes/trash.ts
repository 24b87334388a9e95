/**
 * The cluster-wide trash: `GET /_cluster/trash` (every node's items merged, grouped by namespace),
 * `POST /_cluster/trash/{item_id}/_verify` (read-only completeness check),
 * `POST /_cluster/trash/{item_id}/_restore` (optional body `{"rename_to": "name"}`),
 * `DELETE /_cluster/trash/{item_id}` (purge one item everywhere) and `DELETE /_cluster/trash`
 * (purge every item everywhere). Nodes that fail to answer appear in `_nodes.failures`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { NodeFailure } from '../../trash/node-trash.ts';
import type { NodesHeader, TrashListView } from '../../trash/trash-views.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { classifyError, errorCause } from '../errors.ts';
import { AnyObject, optionalBody, querySchema } from '../params.ts';
import type { TrashAdminService } from '../../node/trash-admin-service.ts';

const ItemParams = Type.Object({ item_id: Type.String({ minLength: 1, maxLength: 200 }) });

const RestoreBody = Type.Object({ rename_to: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: false });

/** Renders each failed node's error as an ES error object. */
function renderNodes(header: NodesHeader) {
  return {
    ...header,
    failures: header.failures.map((failure: NodeFailure) => {
      const { code, reason } = classifyError(failure.error);
      return { node_id: failure.nodeId, node_name: failure.nodeName, ...errorCause(code, reason) };
    }),
  };
}

/** The listing as a caller limited to some namespaces sees it: their items only. */
function visibleListing(listing: TrashListView, scope: AuthScope): TrashListView {
  if (scope.unrestricted) return listing;
  const namespaces = Object.fromEntries(Object.entries(listing.namespaces).filter(([namespace]) => scope.allows(namespace)));
  const totalItems = Object.values(namespaces).reduce((total, group) => total + group.items.length, 0);
  // Unreadable items have no known namespace: only unrestricted callers see them.
  return { ...listing, namespaces, total_items: totalItems, unreadable: [] };
}

/** What the trash routes need: the trash admin service. */
export interface TrashRouteOptions {
  trash: TrashAdminService;
}

/** Trash routes. */
export async function trashRoutes(instance: FastifyInstance, options: TrashRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { trash } = options;

  /** Refuses (403) an item of a namespace the caller may not reach; an unknown item is left to the route's 404. */
  const requireItemInScope = async (scope: AuthScope, itemId: string): Promise<void> => {
    if (scope.unrestricted) return;
    for (const [namespace, group] of Object.entries((await trash.list()).namespaces)) {
      if (group.items.some((item) => item.item_id === itemId)) scope.requireNamespace(namespace);
    }
  };

  app.get('/_cluster/trash', { config: { role: 'monitor' }, schema: { querystring: querySchema({}) } }, async (request) => {
    const listing = visibleListing(await trash.list(), request.authScope);
    return { ...listing, _nodes: renderNodes(listing._nodes) };
  });

  app.post(
    '/_cluster/trash/:item_id/_verify',
    { config: { role: 'manage' }, schema: { params: ItemParams, querystring: querySchema({}), body: optionalBody(AnyObject) } },
    async (request) => {
      await requireItemInScope(request.authScope, request.params.item_id);
      const verification = await trash.verify(request.params.item_id);
      return { ...verification, _nodes: renderNodes(verification._nodes) };
    },
  );

  app.post(
    '/_cluster/trash/:item_id/_restore',
    { config: { role: 'manage' }, schema: { params: ItemParams, querystring: querySchema({}), body: optionalBody(RestoreBody) } },
    async (request) => {
      await requireItemInScope(request.authScope, request.params.item_id);
      return trash.restore(request.params.item_id, request.body ?? {});
    },
  );

  app.delete(
    '/_cluster/trash/:item_id',
    { config: { role: 'manage' }, schema: { params: ItemParams, querystring: querySchema({}) } },
    async (request) => {
      await requireItemInScope(request.authScope, request.params.item_id);
      const purged = await trash.purge(request.params.item_id);
      return { ...purged, _nodes: renderNodes(purged._nodes) };
    },
  );

  app.delete('/_cluster/trash', { config: { role: 'admin' }, schema: { querystring: querySchema({}) } }, async (request) => {
    request.authScope.requireUnrestricted('DELETE /_cluster/trash');
    const purged = await trash.empty();
    return { ...purged, _nodes: renderNodes(purged._nodes) };
  });
}
