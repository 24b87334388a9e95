/**
 * Roles of PRODUCT.md 4.8. Every route declares the least role it needs in its Fastify route
 * `config`; registration collects them into one table (`app.routeRoles`), and the security
 * plugin (src/api/auth) checks them in one `onRequest` hook.
 */
import type { FastifyInstance } from 'fastify';

/** Roles from least to most privileged (`monitor` and `read` are siblings; see `ROLE_GRANTS`). */
export type Role = 'monitor' | 'read' | 'write' | 'manage' | 'admin';

/**
 * What a route may require: a role, `authenticated` for routes any valid key may call
 * (`GET /`, `GET /_security/_authenticate`), or `public` for the console's static files
 * (src/api/routes/console.ts), which the browser loads before the user has typed a key. A
 * `public` route must be a `GET` of a fixed path (no parameters, no wildcard): see
 * `requireRouteRoles`.
 */
export type RouteRole = Role | 'authenticated' | 'public';

/**
 * The roles each role includes. `manage` includes `monitor`: whoever compacts and restores must
 * be able to follow the jobs and list the trash it acts on.
 */
export const ROLE_GRANTS: Readonly<Record<Role, readonly Role[]>> = {
  monitor: ['monitor'],
  read: ['read'],
  write: ['read', 'write'],
  manage: ['monitor', 'read', 'write', 'manage'],
  admin: ['monitor', 'read', 'write', 'manage', 'admin'],
};

/** One registered route (one method of it) and the role it requires. */
export interface RouteRoleEntry {
  method: string;
  url: string;
  role: RouteRole;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Least role a caller needs for this route. */
    role?: RouteRole;
  }
  interface FastifyInstance {
    /** Every registered route with the role it requires, in registration order. */
    routeRoles: readonly RouteRoleEntry[];
  }
}

/** True when a key with role `held` may call a route that requires `required`. */
export function roleAllows(held: Role, required: RouteRole): boolean {
  return required === 'authenticated' || required === 'public' || ROLE_GRANTS[held].includes(required);
}

/** True for the five role names. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && Object.hasOwn(ROLE_GRANTS, value);
}

/**
 * Makes route registration fail when a route does not declare its role, or declares `public`
 * for anything but a `GET` of a fixed path, and records the table.
 */
export function requireRouteRoles(app: FastifyInstance): void {
  const table: RouteRoleEntry[] = [];
  app.decorate('routeRoles', table);
  app.addHook('onRoute', (route) => {
    const role = (route.config as { role?: unknown } | undefined)?.role;
    if (role !== 'authenticated' && role !== 'public' && !isRole(role)) {
      throw new Error(`route ${String(route.method)} ${route.url} does not declare config.role`);
    }
    if (role === 'public' && (route.method !== 'GET' || /[:*]/.test(route.url))) {
      throw new Error(`route ${String(route.method)} ${route.url} cannot be public: only a GET of a fixed path (no parameters) may be`);
    }
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      table.push({ method: String(method), url: route.url, role });
    }
  });
}
