/** `GET /_metrics`: the node stats in Prometheus text format (src/ops/stats/prometheus.ts). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RouteOptions } from '../server.ts';
import { querySchema } from '../params.ts';

/** The Prometheus scrape route. */
export async function metricsRoutes(instance: FastifyInstance, options: RouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { node } = options;

  app.get('/_metrics', { config: { role: 'monitor' }, schema: { querystring: querySchema({}) } }, async (_request, reply) => {
    const { contentType, text } = await node.metrics(instance.security?.counters.snapshot() ?? null);
    return reply.type(contentType).send(text);
  });
}
