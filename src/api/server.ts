/**
 * The HTTP server of a node: Fastify with TypeBox schemas validated by ajv, the JSON/NDJSON body
 * parsers, the ES error rendering, and every API route. All routes live in one encapsulated
 * plugin (`apiRoutes`) so the security plugin can add its `onRequest` hook in one place. Each
 * route plugin receives only the node's resource service(s) it serves (`node.documents`,
 * `node.search`, ...), not the whole node.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { NodeConfig } from '../config/load-config.ts';
import type { NodeService } from '../node/node-service.ts';
import { installJsonParsers } from './content-types.ts';
import { installErrorHandling, renderFrameworkError } from './error-handler.ts';
import { applyFilterPath } from './filter-path.ts';
import { installSecurity } from './auth/security-plugin.ts';
import { requireRouteRoles } from './roles.ts';
import { bulkRoutes } from './routes/bulk.ts';
import { catRoutes } from './routes/cat.ts';
import { catSegmentsRoutes } from './routes/cat-segments.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { nodeRoutes } from './routes/node.ts';
import { installHttpStats } from '../ops/stats/http-stats.ts';
import { changesRoutes } from './routes/changes.ts';
import { collectionRoutes } from './routes/collections.ts';
import { compactRoutes } from './routes/compact.ts';
import { documentRoutes } from './routes/documents.ts';
import { jobRoutes } from './routes/jobs.ts';
import { mgetRoutes } from './routes/mget.ts';
import { namespaceRoutes } from './routes/namespaces.ts';
import { rootRoutes } from './routes/root.ts';
import { searchRoutes } from './routes/search.ts';
import { securityRoutes } from './routes/security.ts';
import { trashRoutes } from './routes/trash.ts';

/** Options of `buildServer`. */
export interface BuildServerOptions {
  node: NodeService;
  config: NodeConfig;
  /** The node's root logger; the server logs through the node's `http` log target, a child of it. */
  logger?: Logger;
}

/** Builds (but does not start) the HTTP server of a node. */
export async function buildServer(options: BuildServerOptions): Promise<FastifyInstance> {
  const { node, config } = options;
  const app = Fastify({
    loggerInstance: node.ops.logs.target('http') as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.values['http.max_content_length'],
    exposeHeadRoutes: false,
    return503OnClosing: true,
    frameworkErrors: renderFrameworkError,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 4096 },
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
  });

  // Elasticsearch accepts a body on GET (`GET /_search` with a query): so does Trove.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  installJsonParsers(app);
  installErrorHandling(app);
  requireRouteRoles(app);
  installResponseFormatting(app);
  installHttpStats(app, node.ops.counters);

  await app.register(apiRoutes, { node, config });
  return app;
}

/** What `apiRoutes` receives: the node (for the security plugin and the route services) and its configuration. */
interface ApiRoutesOptions {
  node: NodeService;
  config: NodeConfig;
}

/** Every API route, in one encapsulated context (the auth hook point); each gets only its services. */
async function apiRoutes(instance: FastifyInstance, options: ApiRoutesOptions): Promise<void> {
  const { node, config } = options;
  await installSecurity(instance, { node, config });
  await instance.register(securityRoutes);
  await instance.register(rootRoutes, { observability: node.observability });
  await instance.register(catRoutes, { collections: node.collections });
  await instance.register(catSegmentsRoutes, { compaction: node.compaction });
  await instance.register(clusterRoutes, { observability: node.observability });
  await instance.register(nodeRoutes, { observability: node.observability });
  await instance.register(metricsRoutes, { observability: node.observability });
  await instance.register(compactRoutes, { compaction: node.compaction });
  await instance.register(jobRoutes, { compaction: node.compaction, observability: node.observability });
  await instance.register(searchRoutes, { search: node.search });
  await instance.register(bulkRoutes, { documents: node.documents });
  await instance.register(documentRoutes, { documents: node.documents });
  await instance.register(mgetRoutes, { documents: node.documents });
  await instance.register(changesRoutes, { changes: node.changes });
  await instance.register(namespaceRoutes, { collections: node.collections });
  await instance.register(trashRoutes, { trash: node.trash });
  await instance.register(collectionRoutes, { collections: node.collections });
}

/** `filter_path` (ES response filtering) and `pretty` (indented JSON) on every JSON response. */
function installResponseFormatting(app: FastifyInstance): void {
  // Callback-style hooks: they run on every response, and most requests use neither parameter.
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    const filterPath = (request.query as Record<string, unknown> | undefined)?.filter_path;
    if (typeof filterPath !== 'string' || payload === null || typeof payload !== 'object') {
      done(null, payload);
      return;
    }
    done(null, applyFilterPath(payload, filterPath));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const pretty = (request.query as Record<string, unknown> | undefined)?.pretty;
    if (pretty === undefined || pretty === 'false' || typeof payload !== 'string' || !String(reply.getHeader('content-type') ?? '').includes('json')) {
      done(null, payload);
      return;
    }
    let formatted = payload;
    try {
      formatted = JSON.stringify(JSON.parse(payload), null, 2) + '\n';
    } catch {
      // not JSON after all: send it as it is
    }
    done(null, formatted);
  });
}
