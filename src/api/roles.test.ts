import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { ROLE_GRANTS, requireRouteRoles } from './roles.ts';

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
