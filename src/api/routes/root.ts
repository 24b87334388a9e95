/** `GET /` and `HEAD /`: node name, cluster and version, as Elasticsearch's root endpoint. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RouteOptions } from '../server.ts';
import { querySchema } from '../params.ts';

/** Root endpoint routes. */
export async function rootRoutes(instance: FastifyInstance, options: RouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { node } = options;

  app.get('/', { config: { role: 'authenticated' }, schema: { querystring: querySchema({}) } }, async () => {
    const info = node.info();
    return {
      name: info.nodeName,
      cluster_name: info.clusterName,
      cluster_uuid: info.clusterUuid,
      node_id: info.nodeId,
      version: {
        distribution: 'trove',
        number: info.version,
        build_type: 'source',
        coordinator: info.coordinator,
      },
      tagline: 'Trove: documents in, answers out',
    };
  });

  app.head('/', { config: { role: 'authenticated' }, schema: { querystring: querySchema({}) } }, async (_request, reply) => {
    return reply.status(200).send();
  });
}
