/**
 * Cross-cutting error handling: every thrown error and every unmatched request is answered with
 * an Elasticsearch error body built from the error table (src/api/errors.ts).
 *
 * Unmatched requests follow Elasticsearch: a path no route knows is a 400
 * `no handler found for uri [...] and method [...]`; a known path with another method is a 405
 * naming the allowed methods.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, renderError } from './errors.ts';

/** Installs the error handler and the not-found handler on the root instance. */
export function installErrorHandling(app: FastifyInstance): void {
  const routes: Array<{ method: string; pattern: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = patternFor(route.url ?? route.path);
    for (const method of methods) routes.push({ method: String(method), pattern });
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const collection = (request.params as { collection?: unknown } | undefined)?.collection;
    const rendered = renderError(error, typeof collection === 'string' ? collection : undefined);
    if (rendered.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ reason: rendered.body.error.reason }, 'request rejected');
    return reply.status(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
    const error =
      allowed.length > 0
        ? new ApiError(
            'method_not_allowed',
            `Incorrect HTTP method for uri [${request.url}] and method [${request.method}], allowed: [${allowed.join(', ')}]`,
          )
        : new ApiError('no_handler', `no handler found for uri [${request.url}] and method [${request.method}]`);
    const rendered = renderError(error);
    if (allowed.length > 0) void reply.header('allow', allowed.join(', '));
    return reply.status(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
  });
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a URL that does not decode,
 * for instance) get the same ES error body as everything else.
 */
export function renderFrameworkError(error: Error, _request: FastifyRequest, reply: FastifyReply): void {
  const rendered = renderError(error);
  void reply.status(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
}

/** Turns a route URL such as `/:collection/_doc/:id` into a regular expression over paths. */
function patternFor(url: string): RegExp {
  const parts = url.split('/').map((part) => {
    if (part.startsWith(':')) return '[^/]+';
    if (part === '*') return '.*';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}/?$`);
}
