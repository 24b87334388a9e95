import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { timingSafeEqual } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { loadConfig } from '../../config/load-config.ts';
import { NodeService } from '../../node/node-service.ts';
import { installErrorHandling } from '../error-handler.ts';
import { requireRouteRoles } from '../roles.ts';
import { installSecurity, type SecurityContext, type SecurityOptions } from './security-plugin.ts';
import type { NodeCredentialVerifier } from './node-credential.ts';

let dataPath: string;
let node: NodeService;
let adminKey: string;
/** Every log line the node and its security plugin wrote. */
const logLines: string[] = [];

const NODE_TOKEN = Buffer.from('cluster-internal-token-for-tests');

/** A verifier as the node-to-node transport will provide one. */
const verifier: NodeCredentialVerifier = {
  scheme: 'TroveNode',
  verify: (token) => {
    const presented = Buffer.from(token);
    return presented.length === NODE_TOKEN.length && timingSafeEqual(presented, NODE_TOKEN) ? 'node-b' : null;
  },
};

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-auth-'));
  const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  node = await NodeService.open({ config: loadConfig({ flags: { 'path.data': dataPath }, env: {} }), logger });
});

after(async () => {
  await node?.close();
  await rm(dataPath, { recursive: true, force: true });
});

/** A server with the security hook and two routes that echo who called them. */
async function server(options: Partial<SecurityOptions> = {}, securityEnabled = true): Promise<{ app: FastifyInstance; security: SecurityContext }> {
  const config = loadConfig({ flags: { 'path.data': dataPath, 'security.enabled': String(securityEnabled) }, env: {} });
  const app = Fastify();
  installErrorHandling(app);
  requireRouteRoles(app);
  let security: SecurityContext | undefined;
  await app.register(async (instance) => {
    security = await installSecurity(instance, { node, config, env: {}, ...options });
    const whoami = async (request: { authScope: { principal: unknown } }) => request.authScope.principal;
    instance.post('/admin-only', { config: { role: 'admin' } }, whoami);
    instance.get('/monitoring', { config: { role: 'monitor' } }, whoami);
  });
  await app.ready();
  adminKey ??= (await readFile(join(dataPath, 'bootstrap-admin.key'), 'utf8')).trim();
  return { app, security: security! };
}

test('a request without a valid key is refused before its body is read', async () => {
  const { app, security } = await server();
  try {
    const noKey = await app.inject({ method: 'POST', url: '/admin-only', headers: { 'content-type': 'application/json' }, payload: '{broken' });
    assert.equal(noKey.statusCode, 401, 'not 400: the malformed body was never parsed');
    assert.equal(noKey.headers['www-authenticate'], 'Bearer realm="trove"');
    const malformed = await app.inject({ method: 'GET', url: '/monitoring', headers: { authorization: 'Bearer' } });
    assert.equal(malformed.statusCode, 401);
    assert.match(String(malformed.headers['www-authenticate']), /error="invalid_request"/);
    const withKey = await app.inject({ method: 'POST', url: '/admin-only', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, payload: '{broken' });
    assert.equal(withKey.statusCode, 400, 'an authenticated request gets its body parsed');
    const counts = security.counters.snapshot().authentication_failures;
    assert.equal(counts.missing, 1);
    assert.equal(counts.malformed, 1);
  } finally {
    await app.close();
  }
});

test('the scheme and the token are never echoed', async () => {
  const { app } = await server();
  try {
    for (const authorization of [`${adminKey}x extra`, `Basic ${adminKey}x`, `Bearer ${adminKey}x`]) {
      const response = await app.inject({ method: 'GET', url: '/monitoring', headers: { authorization } });
      assert.equal(response.statusCode, 401);
      assert.ok(!response.body.includes(adminKey), response.body);
    }
  } finally {
    await app.close();
  }
});

test('the cluster-internal credential hook: a verified node acts as admin; without a verifier the scheme is refused', async () => {
  const { app: withVerifier } = await server({ nodeCredential: verifier });
  const { app: withoutVerifier } = await server();
  try {
    const internal = { authorization: `TroveNode ${NODE_TOKEN.toString()}` };
    const accepted = await withVerifier.inject({ method: 'POST', url: '/admin-only', headers: internal });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.deepEqual(accepted.json(), { kind: 'node', id: 'node-b', name: 'node-b', role: 'admin', namespaces: null });
    const wrong = await withVerifier.inject({ method: 'POST', url: '/admin-only', headers: { authorization: 'TroveNode forged-token-forged-token' } });
    assert.equal(wrong.statusCode, 401);
    const unconfigured = await withoutVerifier.inject({ method: 'POST', url: '/admin-only', headers: internal });
    assert.equal(unconfigured.statusCode, 401);
    const keyStillWorks = await withVerifier.inject({ method: 'GET', url: '/monitoring', headers: { authorization: `Bearer ${adminKey}` } });
    assert.equal(keyStillWorks.statusCode, 200);
  } finally {
    await withVerifier.close();
    await withoutVerifier.close();
  }
});

test('with security disabled every request acts as an unrestricted admin, and the start says so', async () => {
  const { app, security } = await server({}, false);
  try {
    assert.ok(logLines.some((line) => line.includes('"level":40') && line.includes('security is disabled')));
    const response = await app.inject({ method: 'POST', url: '/admin-only' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().kind, 'anonymous');
    assert.equal(security.enabled, false);
  } finally {
    await app.close();
  }
});
