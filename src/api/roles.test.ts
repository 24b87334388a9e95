import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { ROLE_GRANTS, requireRouteRoles, roleAllows } from './roles.ts';

test('a route without a declared role cannot be registered', async () => {
  const app = Fastify();
  requireRouteRoles(app);
  app.get('/ok', { config: { role: 'read' } }, async () => ({}));
  assert.throws(() => app.get('/missing', async () => ({})), /does not declare config.role/);
  await app.close();
});

test('roles include the roles below them; admin includes every role', () => {
  assert.deepEqual([...ROLE_GRANTS.write].sort(), ['read', 'write']);
  assert.ok(ROLE_GRANTS.manage.includes('write'));
  assert.deepEqual([...ROLE_GRANTS.admin].sort(), ['admin', 'manage', 'monitor', 'read', 'write']);
  assert.ok(!ROLE_GRANTS.read.includes('monitor'));
});

test('registration records every route and method with its role; authenticated routes open to every role', async () => {
  const app = Fastify({ exposeHeadRoutes: false });
  requireRouteRoles(app);
  app.route({ method: ['GET', 'POST'], url: '/things/:id', config: { role: 'write' }, handler: async () => ({}) });
  app.get('/', { config: { role: 'authenticated' } }, async () => ({}));
  await app.ready();
  assert.deepEqual(app.routeRoles, [
    { method: 'GET', url: '/things/:id', role: 'write' },
    { method: 'POST', url: '/things/:id', role: 'write' },
    { method: 'GET', url: '/', role: 'authenticated' },
  ]);
  for (const role of ['monitor', 'read', 'write', 'manage', 'admin'] as const) assert.equal(roleAllows(role, 'authenticated'), true);
  assert.equal(roleAllows('read', 'write'), false);
  assert.equal(roleAllows('manage', 'monitor'), true, 'whoever compacts and restores follows jobs and the trash list');
  assert.equal(roleAllows('monitor', 'read'), false);
  await app.close();
});

test('a public route must be a GET of a fixed path; every role may call it', async () => {
  const app = Fastify({ exposeHeadRoutes: false });
  requireRouteRoles(app);
  app.get('/_console/app.js', { config: { role: 'public' } }, async () => '');
  assert.throws(() => app.post('/_console/upload', { config: { role: 'public' } }, async () => ''), /cannot be public/);
  assert.throws(() => app.get('/_console/:file', { config: { role: 'public' } }, async () => ''), /cannot be public/);
  assert.throws(() => app.get('/_console/*', { config: { role: 'public' } }, async () => ''), /cannot be public/);
  for (const role of ['monitor', 'read', 'write', 'manage', 'admin'] as const) assert.equal(roleAllows(role, 'public'), true);
  await app.close();
});
