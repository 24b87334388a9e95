/**
 * The security plugin: one `onRequest` hook on the root instance, so it runs for every request,
 * routed or not. It runs before the body is read or parsed, so a request without a valid key
 * costs a header parse and one hash. In order: authenticate (`Authorization: Bearer <API key>`,
 * or the cluster-internal credential, see node-credential.ts) or 401 with
 * `WWW-Authenticate: Bearer` and `Connection: close` (the unread body of a stranger is not
 * waited for); check the route's role (src/api/roles.ts) or 403; attach `request.authScope`; and
 * for a key limited to namespaces, check the `{collection}` path parameter (or narrow it, on
 * routes whose `config.collectionTarget` says it is a search-style target) or 403. A request no
 * route matches is authenticated only: any valid key then gets the 400 / 405 of
 * error-handler.ts, a stranger a 401 that reveals nothing about the routes. The one exemption:
 * a matched route whose role is `public` (the console's static files, each a `GET` of a fixed
 * path, src/api/routes/console.ts) is served without a key and without `request.authScope`.
 *
 * With `security.enabled: false` every request acts as `admin` on every namespace and the start
 * logs a warning. Refusals are counted (`security.counters`) and logged without key material.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_ENV, ensureBootstrapKey } from '../../ops/security/bootstrap.ts';
import { ApiKeys } from '../../ops/security/api-keys.ts';
import { AuthCounters, type AuthenticationFailure } from '../../ops/security/auth-counters.ts';
import { SecurityError } from '../../ops/security/security-error.ts';
import { isRole, roleAllows } from '../roles.ts';
import type { NodeConfig } from '../../config/load-config.ts';
import type { NodeService } from '../../node/node-service.ts';
import { AuthScope, describePrincipal, type Principal } from './auth-scope.ts';
import type { NodeCredentialVerifier } from './node-credential.ts';

/** The route pattern for logs and messages, or the path when no route matched (never the query string). */
function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? request.url.split('?')[0] ?? '/';
}

/** Options of `installSecurity`. */
export interface SecurityOptions {
  /** The node: its coordinator holds the API keys, its log targets the `security` logger. */
  node: NodeService;
  config: NodeConfig;
  /** Verifier of the cluster-internal credential; absent, only API keys are accepted. */
  nodeCredential?: NodeCredentialVerifier;
  /** Environment holding `TROVE_API_KEY` (default: the process environment). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** What the security plugin shares with routes (`instance.security`). */
export interface SecurityContext {
  /** False when `security.enabled` is false: nothing is checked. */
  readonly enabled: boolean;
  readonly keys: ApiKeys;
  /** Refused requests, for node stats. */
  readonly counters: AuthCounters;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The API keys and refusal counters of this node (set by `installSecurity`). */
    security: SecurityContext;
  }
  interface FastifyRequest {
    /** Who sent the request and which namespaces it may reach (set by the security hook). */
    authScope: AuthScope;
  }
  interface FastifyContextConfig {
    /** The `{collection}` parameter is a search-style target (comma list, wildcards, `_all`). */
    collectionTarget?: boolean;
  }
}

const REALM = 'Bearer realm="trove"';
const ANONYMOUS: Principal = { kind: 'anonymous', id: '', name: 'anonymous', role: 'admin', namespaces: null };

/**
 * Installs the hook on `instance` (the root instance, so that unmatched requests pass it too) and
 * decorates it with `security`. On first start with security on, creates the admin key (see
 * bootstrap.ts).
 */
export async function installSecurity(instance: FastifyInstance, options: SecurityOptions): Promise<SecurityContext> {
  const { node, config, nodeCredential } = options;
  const enabled = config.values['security.enabled'];
  const logger = node.ops.logs.target('security');
  const coordinator = node.coordinator;
  const keys = new ApiKeys({ coordinator, logger });
  const counters = new AuthCounters();
  const security: SecurityContext = { enabled, keys, counters };
  instance.addHook('onClose', async () => keys.close());

  if (enabled) {
    const env = options.env ?? process.env;
    await ensureBootstrapKey({ coordinator, dataPath: config.values['path.data'], suppliedKey: env[API_KEY_ENV], logger });
  } else {
    logger.warn('security is disabled (security.enabled: false): every request is allowed without an API key; use this for local experiments only');
  }

  const refuse = (request: FastifyRequest, reply: FastifyReply, reason: AuthenticationFailure, message: string, keyId: string | null): SecurityError => {
    counters.authenticationFailed(reason);
    const error = reason === 'missing' ? '' : reason === 'malformed' ? ', error="invalid_request"' : ', error="invalid_token"';
    void reply.header('www-authenticate', REALM + error).header('connection', 'close');
    request.log.warn({ reason, keyId, method: request.method, route: routeLabel(request), remote: request.ip }, `authentication failed: ${message}`);
    return new SecurityError('security_unauthenticated', message);
  };

  const authenticate = (request: FastifyRequest, reply: FastifyReply): Principal => {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw refuse(request, reply, 'missing', `missing authentication credentials for REST request [${request.method} ${routeLabel(request)}]`, null);
    }
    // The token is never echoed, nor the scheme: a client that forgot the scheme sends its key there.
    const match = /^(\S+) +(\S+) *$/.exec(header);
    if (match === null) throw refuse(request, reply, 'malformed', 'the Authorization header must read "Bearer <API key>"', null);
    const scheme = match[1].toLowerCase();
    const token = match[2];
    if (scheme === 'bearer') {
      const result = keys.authenticate(token);
      if (result.ok) {
        const { record } = result;
        if (!isRole(record.role)) throw refuse(request, reply, 'unknown', `API key [${record.id}] has an unknown role`, record.id);
        return { kind: 'api_key', id: record.id, name: record.name, role: record.role, namespaces: record.namespaces };
      }
      if (result.reason === 'expired') throw refuse(request, reply, 'expired', `API key [${result.keyId}] has expired`, result.keyId);
      throw refuse(request, reply, 'unknown', 'unable to authenticate with the provided API key', result.keyId);
    }
    if (nodeCredential !== undefined && scheme === nodeCredential.scheme.toLowerCase()) {
      const nodeId = nodeCredential.verify(token);
      if (nodeId !== null) return { kind: 'node', id: nodeId, name: nodeId, role: 'admin', namespaces: null };
      throw refuse(request, reply, 'unknown', 'unable to authenticate with the provided node credential', null);
    }
    throw refuse(request, reply, 'malformed', 'unsupported authorization scheme; send "Authorization: Bearer <API key>"', null);
  };

  instance.decorate('security', security);
  instance.decorateRequest('authScope', null as unknown as AuthScope);
  const admit = (request: FastifyRequest, reply: FastifyReply): void => {
    // `requireRouteRoles` admits `public` only on a GET of a fixed path: no parameter to traverse with.
    if (!request.is404 && request.method === 'GET' && request.routeOptions.config.role === 'public') return;
    const principal = enabled ? authenticate(request, reply) : ANONYMOUS;
    const scope = new AuthScope(principal, coordinator, counters);
    request.authScope = scope;
    // No route matched: nothing to authorize; the not-found handler answers 400 or 405.
    if (request.is404) return;
    const required = request.routeOptions.config.role ?? 'admin';
    if (!roleAllows(principal.role, required)) {
      counters.authorizationFailed('role');
      const action = `${request.method} ${request.routeOptions.url}`;
      request.log.info({ principal: principal.id, role: principal.role, required, method: request.method, route: request.routeOptions.url }, 'request refused: role');
      throw new SecurityError(
        'security_forbidden',
        `action [${action}] requires role [${required}]; ${describePrincipal(principal)} has role [${principal.role}]`,
      );
    }
    const params = request.params as Record<string, unknown> | undefined;
    if (!scope.unrestricted && typeof params?.collection === 'string') {
      if (request.routeOptions.config.collectionTarget === true) params.collection = scope.narrowTarget(params.collection);
      else scope.requireConcreteCollections(params.collection);
    }
  };
  // Callback style: it runs on every request, and what `admit` throws reaches the error handler all the same.
  instance.addHook('onRequest', (request, reply, done) => {
    admit(request, reply);
    done();
  });
  return security;
}
