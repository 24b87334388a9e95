/** `GET /` and `HEAD /`: node name, cluster and version, as Elasticsearch's root endpoint. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ObservabilityService } from '../../node/observability-service.ts';
import { querySchema } from '../params.ts';

/** What the root routes need: the observability service. */
export interface RootRouteOptions {
  observability: ObservabilityService;
}

/** Root endpoint routes. */
export async function rootRoutes(instance: FastifyInstance, options: RootRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { observability } = options;

  app.get('/', { config: { role: 'authenticated' }, schema: { querystring: querySchema({}) } }, async () => {
    const info = observability.info();
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
