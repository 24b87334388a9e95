/**
 * Roles of PRODUCT.md 4.8. Every route declares the least role it needs in its Fastify route
 * `config`; the security plugin (a later issue) reads it in one `onRequest` hook.
 */
import type { FastifyInstance } from 'fastify';

/** Roles from least to most privileged (`monitor` and `read` are siblings; see `ROLE_GRANTS`). */
export type Role = 'monitor' | 'read' | 'write' | 'manage' | 'admin';

/** The roles each role includes. */
export const ROLE_GRANTS: Readonly<Record<Role, readonly Role[]>> = {
  monitor: ['monitor'],
  read: ['read'],
  write: ['read', 'write'],
  manage: ['read', 'write', 'manage'],
  admin: ['monitor', 'read', 'write', 'manage', 'admin'],
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Least role a caller needs for this route. */
    role?: Role;
  }
}

/** Makes route registration fail when a route does not declare its role. */
export function requireRouteRoles(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const role = (route.config as { role?: unknown } | undefined)?.role;
    if (typeof role !== 'string' || !(role in ROLE_GRANTS)) {
      throw new Error(`route ${String(route.method)} ${route.url} does not declare config.role`);
    }
  });
}
