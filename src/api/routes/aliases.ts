/**
 * Alias routes (Elasticsearch's alias APIs): `PUT|POST /{collection}/_alias/{name}` (and
 * `_aliases/{name}`; `/_alias/{name}`, `/{collection}/_alias` and `/_alias` with the rest in the
 * body's `index` and `alias`), `DELETE /{collection}/_alias/{name}`, `GET|HEAD [/{collection}]/_alias[/{name}]`,
 * `POST /_aliases` with `add`/`remove`/`remove_index` actions applied as one catalog change, and
 * `GET /_cat/aliases[/{name}]`. Changes need the `manage` role; a key limited to namespaces names
 * its collections concretely and sees only their aliases.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { matchesWildcard } from '../../cluster/names.ts';
import type { AliasRow } from '../../node/aliases-api.ts';
import type { CollectionService } from '../../node/collection-service.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { CAT_QUERY, sendCat, type CatTable } from '../cat-table.ts';
import { AnyObject, CollectionParams, optionalBody, querySchema } from '../params.ts';

const AliasQuery = querySchema({
  timeout: Type.Optional(Type.String()),
  master_timeout: Type.Optional(Type.String()),
  cluster_manager_timeout: Type.Optional(Type.String()),
});

const ReadQuery = querySchema({
  local: Type.Optional(Type.String()),
  ignore_unavailable: Type.Optional(Type.String()),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
});

const CatQuery = querySchema(CAT_QUERY);

const NameParams = Type.Object({ name: Type.String({ minLength: 1 }) });
const CollectionNameParams = Type.Object({ collection: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }) });

const ALIAS_TABLE: CatTable<AliasRow> = {
  columns: (['alias', 'index', 'filter', 'routing.index', 'routing.search', 'is_write_index'] as const).map((name) => ({
    name,
    description: { alias: 'alias name', index: 'collection the alias points to', filter: 'whether the alias has a filter', 'routing.index': 'index routing', 'routing.search': 'search routing', is_write_index: 'whether it is the write index' }[name],
    numeric: false,
    value: (row: AliasRow) => row[name],
  })),
  defaultColumns: ['alias', 'index', 'filter', 'routing.index', 'routing.search', 'is_write_index'],
  defaultSort: 'alias',
};

/** The collections of `POST /_aliases` actions, each checked against the caller's namespaces. */
function requireActionCollections(scope: AuthScope, body: unknown): void {
  if (scope.unrestricted || body === null || typeof body !== 'object' || !Array.isArray((body as { actions?: unknown }).actions)) return;
  for (const entry of (body as { actions: unknown[] }).actions) {
    for (const action of Object.values(entry !== null && typeof entry === 'object' ? entry : {})) {
      if (action === null || typeof action !== 'object') continue;
      const { index, indices } = action as { index?: unknown; indices?: unknown };
      for (const name of [index, ...(Array.isArray(indices) ? indices : [indices])]) if (typeof name === 'string') scope.requireConcreteCollections(name);
    }
  }
}

/** What the alias routes need: the collection service. */
export interface AliasRouteOptions {
  collections: CollectionService;
}

/** Alias routes. */
export async function aliasRoutes(instance: FastifyInstance, options: AliasRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;
  const visible = (scope: AuthScope) => (collection: string) => scope.allowsCollection(collection);

  for (const segment of ['_alias', '_aliases']) {
    app.route({
      method: ['PUT', 'POST'],
      url: `/:collection/${segment}/:name`,
      config: { role: 'manage' },
      schema: { params: CollectionNameParams, querystring: AliasQuery, body: optionalBody(AnyObject) },
      handler: async (request) => {
        requireBodyCollections(request.authScope, request.body);
        return collections.putAlias(request.params.collection, request.params.name, request.body ?? {});
      },
    });
    app.delete(
      `/:collection/${segment}/:name`,
      { config: { role: 'manage' }, schema: { params: CollectionNameParams, querystring: AliasQuery } },
      async (request) => collections.deleteAlias(request.params.collection, request.params.name),
    );
  }

  /** The collections a put-alias body names (`index`, `indices`), each checked against the caller's namespaces. */
  const requireBodyCollections = (scope: AuthScope, body: unknown): void => {
    if (scope.unrestricted || body === null || typeof body !== 'object') return;
    const { index, indices } = body as { index?: unknown; indices?: unknown };
    for (const name of [index, ...(Array.isArray(indices) ? indices : [indices])]) if (typeof name === 'string') scope.requireConcreteCollections(name);
  };
  for (const segment of ['_alias', '_aliases']) {
    app.route({
      method: ['PUT', 'POST'],
      url: `/:collection/${segment}`,
      config: { role: 'manage' },
      schema: { params: CollectionParams, querystring: AliasQuery, body: optionalBody(AnyObject) },
      handler: async (request) => {
        requireBodyCollections(request.authScope, request.body);
        return collections.putAlias(request.params.collection, undefined, request.body ?? {});
      },
    });
  }
  app.route({
    method: ['PUT', 'POST'],
    url: '/_alias/:name',
    config: { role: 'manage' },
    schema: { params: NameParams, querystring: AliasQuery, body: optionalBody(AnyObject) },
    handler: async (request) => {
      requireBodyCollections(request.authScope, request.body);
      return collections.putAlias(undefined, request.params.name, request.body ?? {});
    },
  });
  app.route({
    method: ['PUT', 'POST'],
    url: '/_alias',
    config: { role: 'manage' },
    schema: { querystring: AliasQuery, body: optionalBody(AnyObject) },
    handler: async (request) => {
      requireBodyCollections(request.authScope, request.body);
      return collections.putAlias(undefined, undefined, request.body ?? {});
    },
  });

  app.post('/_aliases', { config: { role: 'manage' }, schema: { querystring: AliasQuery, body: AnyObject } }, async (request) => {
    requireActionCollections(request.authScope, request.body);
    return collections.updateAliases(request.body);
  });

  const answer = async (reply: FastifyReply, scope: AuthScope, target: string | undefined, names: string | undefined, head: boolean) => {
    const view = await collections.getAliases(target, names, visible(scope));
    if (head) {
      const anyAlias = view.status === 200 && Object.values(view.body).some((entry) => Object.keys((entry as { aliases: object }).aliases).length > 0);
      return reply.status(anyAlias ? 200 : 404).send();
    }
    return reply.status(view.status).send(view.body);
  };
  for (const method of ['GET', 'HEAD'] as const) {
    const head = method === 'HEAD';
    app.route({ method, url: '/_alias', config: { role: 'read' }, schema: { querystring: ReadQuery }, handler: async (request, reply) => answer(reply, request.authScope, undefined, undefined, head) });
    app.route({
      method,
      url: '/_alias/:name',
      config: { role: 'read' },
      schema: { params: NameParams, querystring: ReadQuery },
      handler: async (request, reply) => answer(reply, request.authScope, undefined, request.params.name, head),
    });
    app.route({
      method,
      url: '/:collection/_alias',
      config: { role: 'read' },
      schema: { params: CollectionParams, querystring: ReadQuery },
      handler: async (request, reply) => answer(reply, request.authScope, request.params.collection, undefined, head),
    });
    app.route({
      method,
      url: '/:collection/_alias/:name',
      config: { role: 'read' },
      schema: { params: CollectionNameParams, querystring: ReadQuery },
      handler: async (request, reply) => answer(reply, request.authScope, request.params.collection, request.params.name, head),
    });
  }

  const cat = async (names: string | undefined, query: Static<typeof CatQuery>, scope: AuthScope, reply: FastifyReply) => {
    let rows = await collections.aliasRows(visible(scope));
    if (names !== undefined) {
      const patterns = names.split(',').map((part) => part.trim()).filter((part) => part !== '');
      rows = rows.filter((row) => patterns.some((pattern) => matchesWildcard(pattern, row.alias)));
    }
    return sendCat(reply, ALIAS_TABLE, rows, query);
  };
  app.get('/_cat/aliases', { config: { role: 'monitor' }, schema: { querystring: CatQuery } }, async (request, reply) => cat(undefined, request.query, request.authScope, reply));
  app.get('/_cat/aliases/:name', { config: { role: 'monitor' }, schema: { params: NameParams, querystring: CatQuery } }, async (request, reply) =>
    cat(request.params.name, request.query, request.authScope, reply),
  );
}
