/**
 * API key routes (admin): `POST /_security/api_key` issues a key and returns it once,
 * `GET /_security/api_key` lists keys without secrets, `DELETE /_security/api_key/{id}` revokes
 * one at once. `GET /_security/_authenticate` tells any valid key who it is.
 *
 * An admin key limited to namespaces manages only keys limited to (some of) its namespaces: it
 * cannot issue, see or revoke a key that reaches further than itself.
 *
 * `expires_in_secs` is a whole number of seconds from 1 to ten years, checked before anything is
 * created (here by the schema, again by `ApiKeys.create`). A revoke that would leave no admin key
 * for every namespace valid for at least another hour is refused (`last_admin_key`).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { invalidNameReason } from '../../cluster/names.ts';
import { EngineError } from '../../engine/errors.ts';
import { MAX_EXPIRES_IN_SECS, MIN_EXPIRES_IN_SECS, type ApiKeyInfo } from '../../ops/security/api-keys.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { querySchema } from '../params.ts';
import { ROLE_GRANTS } from '../roles.ts';

const RoleName = Type.Union(Object.keys(ROLE_GRANTS).map((role) => Type.Literal(role)));

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    role: RoleName,
    namespaces: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000 })),
    expires_in_secs: Type.Optional(Type.Integer({ minimum: MIN_EXPIRES_IN_SECS, maximum: MAX_EXPIRES_IN_SECS })),
  },
  { additionalProperties: false },
);

const ListQuery = querySchema({
  id: Type.Optional(Type.String({ minLength: 1 })),
  name: Type.Optional(Type.String({ minLength: 1 })),
});

const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/** ISO 8601 time, or null for none (a time no date can show, as a broken record could hold, is none too). */
function isoTime(millis: number | null): string | null {
  return millis === null || !Number.isFinite(millis) ? null : new Date(millis).toISOString();
}

/** A key as the API shows it (never its secret or hash). */
function renderKey(info: ApiKeyInfo) {
  return {
    id: info.id,
    name: info.name,
    role: info.role,
    namespaces: info.namespaces,
    created: isoTime(info.createdAt),
    expires: isoTime(info.expiresAt),
    last_used: isoTime(info.lastUsedAt),
    expired: info.expired,
  };
}

/** True when the caller's scope covers every namespace the key reaches. */
function withinScope(scope: AuthScope, namespaces: readonly string[] | null): boolean {
  if (scope.unrestricted) return true;
  return namespaces !== null && namespaces.every((namespace) => scope.allows(namespace));
}

/** Refuses (403) a key that reaches further than the caller. */
function requireWithinScope(scope: AuthScope, namespaces: readonly string[] | null): void {
  if (namespaces === null) scope.requireUnrestricted('a key for every namespace');
  else for (const namespace of namespaces) scope.requireNamespace(namespace);
}

/** API key routes. */
export async function securityRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { keys, enabled } = instance.security;

  app.route({
    method: ['POST', 'PUT'],
    url: '/_security/api_key',
    config: { role: 'admin' },
    schema: { querystring: querySchema({}), body: CreateBody },
    handler: async (request) => {
      const { name, role, namespaces, expires_in_secs: expiresInSecs } = request.body;
      for (const namespace of namespaces ?? []) {
        const invalid = invalidNameReason(namespace);
        if (invalid !== null) throw new EngineError('illegal_argument', `invalid namespace name [${namespace}] in [namespaces]: ${invalid}`);
      }
      requireWithinScope(request.authScope, namespaces ?? null);
      const { record, key } = await keys.create({ name, role, namespaces: namespaces ?? null, expiresInSecs: expiresInSecs ?? null });
      return {
        id: record.id,
        name: record.name,
        role: record.role,
        namespaces: record.namespaces,
        created: isoTime(record.createdAt),
        expires: isoTime(record.expiresAt),
        api_key: key,
      };
    },
  });

  app.get('/_security/api_key', { config: { role: 'admin' }, schema: { querystring: ListQuery } }, async (request) => {
    const { id, name } = request.query;
    const listed = keys
      .list()
      .filter((info) => (id === undefined || info.id === id) && (name === undefined || info.name === name))
      .filter((info) => withinScope(request.authScope, info.namespaces));
    return { api_keys: listed.map(renderKey) };
  });

  app.delete('/_security/api_key/:id', { config: { role: 'admin' }, schema: { params: KeyParams, querystring: querySchema({}) } }, async (request) => {
    const target = keys.get(request.params.id);
    requireWithinScope(request.authScope, target.namespaces);
    const revoked = await keys.revoke(target.id);
    return { acknowledged: true, revoked: renderKey(revoked) };
  });

  app.get('/_security/_authenticate', { config: { role: 'authenticated' }, schema: { querystring: querySchema({}) } }, async (request) => {
    const { principal } = request.authScope;
    return {
      security_enabled: enabled,
      authenticated_by: principal.kind,
      id: principal.id,
      name: principal.name,
      role: principal.role,
      namespaces: principal.namespaces,
    };
  });
}
