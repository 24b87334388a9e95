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
import type { NodeFailure } from '../../ops/trash/node-trash.ts';
import type { NodesHeader } from '../../ops/trash/trash-views.ts';
import { classifyError, errorCause } from '../errors.ts';
import { AnyObject, optionalBody, querySchema } from '../params.ts';
import type { RouteOptions } from '../server.ts';

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

/** Trash routes. */
export async function trashRoutes(instance: FastifyInstance, options: RouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { node } = options;

  app.get('/_cluster/trash', { config: { role: 'monitor' }, schema: { querystring: querySchema({}) } }, async () => {
    const listing = await node.listTrash();
    return { ...listing, _nodes: renderNodes(listing._nodes) };
  });

  app.post(
    '/_cluster/trash/:item_id/_verify',
    { config: { role: 'manage' }, schema: { params: ItemParams, querystring: querySchema({}), body: optionalBody(AnyObject) } },
    async (request) => {
      const verification = await node.verifyTrashItem(request.params.item_id);
      return { ...verification, _nodes: renderNodes(verification._nodes) };
    },
  );

  app.post(
    '/_cluster/trash/:item_id/_restore',
    { config: { role: 'manage' }, schema: { params: ItemParams, querystring: querySchema({}), body: optionalBody(RestoreBody) } },
    async (request) => node.restoreTrashItem(request.params.item_id, request.body ?? {}),
  );

  app.delete(
    '/_cluster/trash/:item_id',
    { config: { role: 'manage' }, schema: { params: ItemParams, querystring: querySchema({}) } },
    async (request) => {
      const purged = await node.purgeTrashItem(request.params.item_id);
      return { ...purged, _nodes: renderNodes(purged._nodes) };
    },
  );

  app.delete('/_cluster/trash', { config: { role: 'admin' }, schema: { querystring: querySchema({}) } }, async () => {
    const purged = await node.emptyTrash();
    return { ...purged, _nodes: renderNodes(purged._nodes) };
  });
}
