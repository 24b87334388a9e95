/**
 * `GET /_cat/collections[/{target}]` (alias `/_cat/indices`): the collection list as a plain-text
 * table like Elasticsearch's `_cat/indices` (`v` adds the header row, `h` picks columns, `s` sorts,
 * `bytes` fixes the size unit, `help` lists the columns) or as JSON with `format=json`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { matchesWildcard } from '../../cluster/names.ts';
import type { CollectionSummary } from '../../node/node-service.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { CAT_QUERY, formatBytes, sendCat, type CatColumn, type CatTable } from '../cat-table.ts';
import type { CollectionService } from '../../node/collection-service.ts';
import { FlagParam, querySchema } from '../params.ts';

const CatQuery = querySchema({
  ...CAT_QUERY,
  health: Type.Optional(Type.Union([Type.Literal('green'), Type.Literal('yellow'), Type.Literal('red')])),
  pri: Type.Optional(FlagParam),
});

type CatQueryType = Static<typeof CatQuery>;

const COLUMNS: readonly CatColumn<CollectionSummary>[] = [
  { name: 'health', description: 'current health status', numeric: false, value: (row) => row.health },
  { name: 'status', description: 'open/close status', numeric: false, value: (row) => row.status },
  { name: 'index', description: 'collection name', numeric: false, value: (row) => row.name },
  { name: 'uuid', description: 'collection uuid', numeric: false, value: (row) => row.uuid },
  { name: 'pri', description: 'number of primary shards', numeric: true, value: (row) => String(row.primaries) },
  { name: 'rep', description: 'number of replica shards', numeric: true, value: (row) => String(row.replicas) },
  { name: 'docs.count', description: 'available docs', numeric: true, value: (row) => String(row.docsCount) },
  { name: 'docs.deleted', description: 'deleted docs', numeric: true, value: (row) => String(row.docsDeleted) },
  { name: 'store.size', description: 'store size of primaries and replicas', numeric: true, value: (row, bytes) => formatBytes(row.storeSizeBytes, bytes) },
  { name: 'pri.store.size', description: 'store size of primaries', numeric: true, value: (row, bytes) => formatBytes(row.storeSizeBytes, bytes) },
  { name: 'namespace', description: 'namespace of the collection', numeric: false, value: (row) => row.namespace },
  { name: 'creation.date', description: 'creation time, epoch millis', numeric: true, value: (row) => String(row.createdAt) },
  { name: 'creation.date.string', description: 'creation time, ISO 8601', numeric: false, value: (row) => new Date(row.createdAt).toISOString() },
];

const COLLECTIONS_TABLE: CatTable<CollectionSummary> = {
  columns: COLUMNS,
  defaultColumns: ['health', 'status', 'index', 'uuid', 'pri', 'rep', 'docs.count', 'docs.deleted', 'store.size', 'pri.store.size'],
  defaultSort: 'index',
};

/** What the `_cat/collections` routes need: the collection service. */
export interface CatRouteOptions {
  collections: CollectionService;
}

/** `_cat` routes. */
export async function catRoutes(instance: FastifyInstance, options: CatRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;

  const handle = async (target: string | undefined, query: CatQueryType, scope: AuthScope, reply: FastifyReply) => {
    let rows = (await collections.listCollections()).filter((row) => scope.allows(row.namespace));
    if (target !== undefined && target !== '_all' && target !== '*') {
      const patterns = target.split(',').map((part) => part.trim()).filter((part) => part !== '');
      // A pattern naming an alias selects its collections, as in Elasticsearch.
      const aliased = new Set((await collections.aliasRows(() => true)).filter((alias) => patterns.some((pattern) => matchesWildcard(pattern, alias.alias))).map((alias) => alias.index));
      rows = rows.filter((row) => aliased.has(row.name) || patterns.some((pattern) => matchesWildcard(pattern, row.name)));
    }
    if (query.health !== undefined) rows = rows.filter((row) => row.health === query.health);
    return sendCat(reply, COLLECTIONS_TABLE, rows, query);
  };

  for (const url of ['/_cat/collections', '/_cat/indices']) {
    app.get(url, { config: { role: 'monitor' }, schema: { querystring: CatQuery } }, async (request, reply) =>
      handle(undefined, request.query, request.authScope, reply),
    );
    app.get(
      `${url}/:target`,
      { config: { role: 'monitor' }, schema: { params: Type.Object({ target: Type.String({ minLength: 1 }) }), querystring: CatQuery } },
      async (request, reply) => handle(request.params.target, request.query, request.authScope, reply),
    );
  }
}
