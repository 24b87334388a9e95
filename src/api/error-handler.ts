/**
 * Cross-cutting error handling: every thrown error, every unmatched request and every request the
 * HTTP parser rejects is answered with an Elasticsearch error body built from the error table
 * (src/api/errors.ts).
 *
 * Unmatched requests follow Elasticsearch: a path no route knows is a 400
 * `no handler found for uri [...] and method [...]`; a known path with another method is a 405
 * naming the allowed methods. With security on, both come after authentication (the security
 * hook runs for unmatched requests too), so a stranger cannot map the API.
 *
 * Routes ignore a trailing slash, so `/_cluster/trash/` would match `/_cluster/trash`. Where the
 * same method also has a route with a parameter in that place (`/_cluster/trash/:item_id`), the
 * trailing slash is that parameter left empty: a 400 naming it, never the broader operation.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, renderError } from './errors.ts';

/** Installs the error handler, the not-found handler and the empty-parameter check on the root instance. */
export function installErrorHandling(app: FastifyInstance): void {
  const routes: Array<{ method: string; pattern: RegExp }> = [];
  const parameterAfter = new Map<string, string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const url = route.url ?? route.path;
    const pattern = patternFor(url);
    for (const method of methods) routes.push({ method: String(method), pattern });
    const trailing = trailingParameter(url);
    if (trailing !== null) for (const method of methods) parameterAfter.set(`${String(method)} ${trailing.parent}`, trailing.name);
  });
  // Callback style: it runs on every request, and a throw inside reaches the error handler all the same.
  app.addHook('preValidation', (request, _reply, done) => {
    refuseEmptyTrailingParameter(request, parameterAfter);
    done();
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const collection = (request.params as { collection?: unknown } | undefined)?.collection;
    const rendered = renderError(error, typeof collection === 'string' ? collection : undefined);
    if (rendered.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ reason: rendered.body.error.reason }, 'request rejected');
    return reply.status(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = requestPath(request);
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

/**
 * Fastify's `clientErrorHandler` option: a request the HTTP parser rejects (malformed request line
 * or headers, bad chunked encoding, headers too large, a request not received in time) is answered
 * on the raw socket with a 400 and the ES error body, then the connection is closed.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this socket cannot be followed by another one.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const rendered = renderError(new ApiError('bad_request', clientErrorReason(error)));
  const body = JSON.stringify(rendered.body);
  socket.end(
    `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/** What went wrong, in words, without echoing the raw bytes the client sent. */
function clientErrorReason(error: ConnectionError): string {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'the request was not received in full in time (headers or body too slow)';
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'the request headers are too large';
  const detail = (error as { reason?: unknown }).reason;
  return `malformed HTTP request: ${typeof detail === 'string' && detail !== '' ? detail : error.message} (${error.code})`;
}

/** The request's path without the query string. */
function requestPath(request: FastifyRequest): string {
  const { url } = request;
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** For `/a/b/:name`, the route it extends (`/a/b`) and the parameter's name; null for other URLs. */
function trailingParameter(url: string): { parent: string; name: string } | null {
  const match = /^(\/.+)\/:([A-Za-z0-9_]+)$/.exec(url);
  return match === null ? null : { parent: match[1], name: match[2] };
}

/** Refuses (400) a trailing slash that stands for an empty path parameter (see the module comment). */
function refuseEmptyTrailingParameter(request: FastifyRequest, parameterAfter: ReadonlyMap<string, string>): void {
  const path = requestPath(request);
  if (path.length <= 1 || !path.endsWith('/')) return;
  const name = parameterAfter.get(`${request.method} ${request.routeOptions.url}`);
  if (name === undefined) return;
  throw new ApiError('invalid_parameter', `path parameter [${name}] is empty in [${request.method} ${path}]; it is required`);
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
