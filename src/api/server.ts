/**
 * The HTTP server of a node: Fastify with TypeBox schemas validated by ajv, the JSON/NDJSON body
 * parsers, the ES error rendering, and every API route. The security plugin's `onRequest` hook
 * sits on the root instance, so it runs before routing decides anything (unknown paths and wrong
 * methods included). Each route plugin receives only the node's resource service(s) it serves
 * (`node.documents`, `node.search`, ...), not the whole node.
 *
 * Connections are bounded (`http.max_connections`, and below it by the file descriptors the node
 * keeps for its own files, connection-budget.ts; further ones are closed at once) and slow
 * clients are cut: headers must arrive within `HEADERS_TIMEOUT_MS`, the whole request within
 * `REQUEST_TIMEOUT_MS`, and an idle keep-alive connection closes after `KEEP_ALIVE_TIMEOUT_MS`
 * (under connection pressure, a connection without a request in flight closes after a second).
 */
import type { Ajv, SchemaValidateFunction } from 'ajv';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { NodeConfig } from '../config/load-config.ts';
import type { NodeService } from '../node/node-service.ts';
import { nodeLoad } from '../cluster/placement.ts';
import { ConnectionBudget } from './connection-budget.ts';
import { installJsonParsers } from './content-types.ts';
import { answerClientError, installErrorHandling, renderFrameworkError } from './error-handler.ts';
import { applyFilterPath } from './filter-path.ts';
import { indentJson } from '../node/json-layout.ts';
import { stringifyWithRawJson } from '../node/raw-json.ts';
import { installSecurity } from './auth/security-plugin.ts';
import { internalShardRoutes } from './routes/internal-shards.ts';
import { requireRouteRoles } from './roles.ts';
import { bulkRoutes } from './routes/bulk.ts';
import { aliasRoutes } from './routes/aliases.ts';
import { catRoutes } from './routes/cat.ts';
import { catSegmentsRoutes } from './routes/cat-segments.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { nodeRoutes } from './routes/node.ts';
import { installHttpStats } from '../ops/stats/http-stats.ts';
import { changesRoutes } from './routes/changes.ts';
import { collectionRoutes } from './routes/collections.ts';
import { collectionSettingsRoutes } from './routes/collection-settings.ts';
import { collectionStatsRoutes } from './routes/collection-stats.ts';
import { fieldCapsRoutes } from './routes/field-caps.ts';
import { recoveryRoutes } from './routes/recovery.ts';
import { compactRoutes } from './routes/compact.ts';
import { forceMergeRoutes } from './routes/forcemerge.ts';
import { byQueryRoutes } from './routes/by-query.ts';
import { documentRoutes } from './routes/documents.ts';
import { jobRoutes } from './routes/jobs.ts';
import { mgetRoutes } from './routes/mget.ts';
import { namespaceRoutes } from './routes/namespaces.ts';
import { rootRoutes } from './routes/root.ts';
import { scrollRoutes } from './routes/scroll.ts';
import { searchRoutes } from './routes/search.ts';
import { multiSearchRoutes } from './routes/msearch.ts';
import { queryToolRoutes } from './routes/query-tools.ts';
import { securityRoutes } from './routes/security.ts';
import { trashRoutes } from './routes/trash.ts';
import { internalNodeRoutes } from './routes/internal-node.ts';
import { internalRecoveryRoutes } from './routes/internal-recovery.ts';
import { consoleRoutes } from './routes/console.ts';

/** Options of `buildServer`. */
export interface BuildServerOptions {
  node: NodeService;
  config: NodeConfig;
  /** The node's root logger; the server logs through the node's `http` log target, a child of it. */
  logger?: Logger;
}

/** A request's headers must have arrived this long after the connection or the previous request. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A request (headers and body) must have arrived in full this long after it started. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** An idle keep-alive connection is closed after this long. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** How often Node checks the two request timeouts (its default, 30 s, would let them overrun by that much). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

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
    clientErrorHandler: answerClientError,
    http: { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 4096 },
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
      plugins: [refuseNonFiniteNumbers],
    },
  });
  installConnectionBudget(app, node, config);

  // Elasticsearch accepts a body on GET (`GET /_search` with a query): so does Trove.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  installJsonParsers(app);
  installErrorHandling(app);
  requireRouteRoles(app);
  installResponseFormatting(app);
  installHttpStats(app, node.ops.counters);
  await installSecurity(app, { node, config, nodeCredential: node.nodeCredentials });

  await app.register(apiRoutes, { node });
  return app;
}

/** What `apiRoutes` receives: the node (for the route services). */
interface ApiRoutesOptions {
  node: NodeService;
}

/** Every API route, in one encapsulated context; each gets only its services. */
async function apiRoutes(instance: FastifyInstance, options: ApiRoutesOptions): Promise<void> {
  const { node } = options;
  await instance.register(securityRoutes);
  await instance.register(consoleRoutes);
  await instance.register(rootRoutes, { observability: node.observability });
  await instance.register(catRoutes, { collections: node.collections });
  await instance.register(catSegmentsRoutes, { compaction: node.compaction });
  await instance.register(clusterRoutes, { observability: node.observability, clusterSettings: node.clusterSettings });
  await instance.register(nodeRoutes, { observability: node.observability });
  await instance.register(metricsRoutes, { observability: node.observability });
  await instance.register(compactRoutes, { compaction: node.compaction });
  await instance.register(forceMergeRoutes, { compaction: node.compaction });
  await instance.register(jobRoutes, { compaction: node.compaction });
  await instance.register(searchRoutes, { search: node.search });
  await instance.register(scrollRoutes, { search: node.search });
  await instance.register(multiSearchRoutes, { search: node.search });
  await instance.register(queryToolRoutes, { search: node.search });
  await instance.register(bulkRoutes, { documents: node.documents });
  await instance.register(documentRoutes, { documents: node.documents });
  await instance.register(byQueryRoutes, { byQuery: node.byQuery });
  await instance.register(mgetRoutes, { documents: node.documents });
  await instance.register(changesRoutes, { changes: node.changes });
  await instance.register(namespaceRoutes, { collections: node.collections });
  await instance.register(trashRoutes, { trash: node.trash });
  await instance.register(internalShardRoutes, node.internalShards);
  await instance.register(internalNodeRoutes, node.internalNode);
  await instance.register(internalRecoveryRoutes, node.internalNode);
  await instance.register(collectionSettingsRoutes, { collections: node.collections });
  await instance.register(collectionStatsRoutes, { collections: node.collections });
  await instance.register(fieldCapsRoutes, { collections: node.collections, search: node.search });
  await instance.register(recoveryRoutes, { recoveries: node.recoveries });
  await instance.register(collectionRoutes, { collections: node.collections });
  await instance.register(aliasRoutes, { collections: node.collections });
}

/** Bounds connections by `http.max_connections` and by the descriptors the node keeps for itself (connection-budget.ts). */
function installConnectionBudget(app: FastifyInstance, node: NodeService, config: NodeConfig): void {
  const logger = node.ops.logs.target('http');
  const budget = new ConnectionBudget(app.server, {
    maxConnections: config.values['http.max_connections'],
    maxShardsPerNode: config.values['cluster.max_shards_per_node'],
    shardThreads: config.values['node.shard_workers'] + 1,
    hostedShardCopies: () => nodeLoad(Object.values(node.coordinator.catalog().collections), [node.nodeId]).get(node.nodeId) ?? 0,
    onRefused: (figures) => logger.warn(figures, `connections refused to keep ${figures.reserve} file descriptors for the node's own files`),
  });
  app.addHook('onReady', async () => budget.start());
  app.addHook('onClose', async () => budget.stop());
}

/**
 * `filter_path` (ES response filtering) and `pretty` (indented JSON) on every JSON response, and
 * the serialiser that writes a RawJson (a `_source` as it was sent) as its text.
 */
function installResponseFormatting(app: FastifyInstance): void {
  app.setReplySerializer((payload) => stringifyWithRawJson(payload));
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
      JSON.parse(payload);
      formatted = indentJson(payload) + '\n';
    } catch {
      // not JSON after all: send it as it is
    }
    done(null, formatted);
  });
}

/** Name of the keyword that refuses `Infinity` and `NaN` where a schema asks for a number. */
const FINITE_KEYWORD = 'x-finite';

/**
 * An ajv plugin: every `number` / `integer` schema also requires a finite value. Type coercion
 * (query strings, and `coerceTypes` in bodies) turns the strings `"Infinity"`, `"-Infinity"` and
 * `"1e309"` into non-finite numbers that ajv neither re-checks nor compares with `minimum` /
 * `maximum`; without this they passed every bound (an API key that never expired, for one).
 */
function refuseNonFiniteNumbers(ajv: Ajv): Ajv {
  // Untyped on purpose: ajv skips a `type: 'number'` keyword for a non-finite number.
  const finite: SchemaValidateFunction = (_required: boolean, value: unknown): boolean => {
    const ok = typeof value !== 'number' || Number.isFinite(value);
    finite.errors = ok ? [] : [{ keyword: FINITE_KEYWORD, message: 'must be a finite number', params: {} }];
    return ok;
  };
  ajv.addKeyword({ keyword: FINITE_KEYWORD, schemaType: 'boolean', errors: true, validate: finite });
  const compile = ajv.compile.bind(ajv);
  const rewritten = new WeakMap<object, object>();
  ajv.compile = ((schema: object) => {
    let copy = rewritten.get(schema);
    if (copy === undefined) rewritten.set(schema, (copy = withFiniteNumbers(schema) as object));
    return compile(copy);
  }) as typeof ajv.compile;
  return ajv;
}

/** Schema keys whose values are data, not schemas: left as they are. */
const DATA_KEYS: ReadonlySet<string> = new Set(['default', 'const', 'enum', 'examples']);

/** A copy of a JSON schema whose number and integer schemas carry `FINITE_KEYWORD`. */
function withFiniteNumbers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withFiniteNumbers);
  if (schema === null || typeof schema !== 'object') return schema;
  // fromEntries defines own properties: a property named `__proto__` stays a property.
  const copy: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, DATA_KEYS.has(key) ? value : withFiniteNumbers(value)]),
  );
  const types = Array.isArray(copy.type) ? copy.type : [copy.type];
  if (types.includes('number') || types.includes('integer')) copy[FINITE_KEYWORD] = true;
  return copy;
}
