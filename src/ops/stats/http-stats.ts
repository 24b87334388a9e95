/**
 * HTTP traffic counters for node stats: connections (open now and accepted in total), requests
 * answered by status class, and total response time. Hooks on the root Fastify instance, so
 * every request counts, including 404s and requests refused by the security plugin.
 */
import type { FastifyInstance } from 'fastify';
import type { NodeCounters } from './node-counters.ts';

/** Installs the counting hooks on the root instance. */
export function installHttpStats(app: FastifyInstance, counters: NodeCounters): void {
  const { http } = counters;
  app.server.on('connection', (socket) => {
    http.current_open++;
    http.total_opened++;
    socket.once('close', () => {
      http.current_open--;
    });
  });
  app.addHook('onResponse', (_request, reply, done) => {
    counters.recordHttpResponse(reply.statusCode, reply.elapsedTime);
    done();
  });
}
