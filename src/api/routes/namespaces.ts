/**
 * Namespace routes: `PUT /_namespace/{name}` creates one, `GET /_namespace` lists them with their
 * collections, `GET /_namespace/{name}` shows one, and `DELETE /_namespace/{name}` moves the
 * namespace with all its collections to the trash as a single item.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { querySchema } from '../params.ts';
import type { CollectionService } from '../../node/collection-service.ts';

const NamespaceParams = Type.Object({ name: Type.String({ minLength: 1 }) });

const ADMIN_QUERY = querySchema({
  timeout: Type.Optional(Type.String()),
  master_timeout: Type.Optional(Type.String()),
  cluster_manager_timeout: Type.Optional(Type.String()),
});

/** What the namespace routes need: the collection service. */
export interface NamespaceRouteOptions {
  collections: CollectionService;
}

/** Namespace routes. */
export async function namespaceRoutes(instance: FastifyInstance, options: NamespaceRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;

  app.put(
    '/_namespace/:name',
    { config: { role: 'manage' }, schema: { params: NamespaceParams, querystring: ADMIN_QUERY } },
    async (request) => {
      request.authScope.requireNamespace(request.params.name);
      return collections.createNamespace(request.params.name);
    },
  );

  app.get('/_namespace', { config: { role: 'read' }, schema: { querystring: querySchema({}) } }, async (request) => ({
    namespaces: (await collections.listNamespaces()).filter((namespace) => request.authScope.allows(namespace.name)),
  }));

  app.get(
    '/_namespace/:name',
    { config: { role: 'read' }, schema: { params: NamespaceParams, querystring: querySchema({}) } },
    async (request) => {
      request.authScope.requireNamespace(request.params.name);
      return collections.getNamespace(request.params.name);
    },
  );

  app.delete(
    '/_namespace/:name',
    { config: { role: 'manage' }, schema: { params: NamespaceParams, querystring: ADMIN_QUERY } },
    async (request) => {
      request.authScope.requireNamespace(request.params.name);
      return collections.deleteNamespace(request.params.name);
    },
  );
}
