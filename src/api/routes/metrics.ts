/** `GET /_metrics`: the node stats in Prometheus text format (src/ops/stats/prometheus.ts). */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ObservabilityService } from '../../node/observability-service.ts';
import { querySchema } from '../params.ts';

/** What the metrics route needs: the observability service. */
export interface MetricsRouteOptions {
  observability: ObservabilityService;
}

/** The Prometheus scrape route. */
export async function metricsRoutes(instance: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { observability } = options;

  app.get('/_metrics', { config: { role: 'monitor' }, schema: { querystring: querySchema({}) } }, async (_request, reply) => {
    const { contentType, text } = await observability.metrics(instance.security?.counters.snapshot() ?? null);
    return reply.type(contentType).send(text);
  });
}
