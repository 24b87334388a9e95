/**
 * The remote shard handle against a real Fastify server in this process: the real security plugin
 * (on a real NodeService, whose coordinator holds the API keys and the cluster secret) with the
 * HMAC node-credential verifier, and the internal shard route serving real LocalShardHandles.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { request } from 'undici';
import { nodeCredentialHeader, HmacNodeCredentialVerifier } from '../../api/auth/node-credential-hmac.ts';
import { installSecurity } from '../../api/auth/security-plugin.ts';
import { installJsonParsers } from '../../api/content-types.ts';
import { installErrorHandling } from '../../api/error-handler.ts';
import { requireRouteRoles } from '../../api/roles.ts';
import { internalShardRoutes } from '../../api/routes/internal-shards.ts';
import { loadConfig, type NodeConfig } from '../../config/load-config.ts';
import { EngineError } from '../../engine/errors.ts';
import { DEFAULT_ENGINE_SETTINGS } from '../../engine/shard/settings.ts';
import { NodeService } from '../../node/node-service.ts';
import { CatalogError } from '../catalog-error.ts';
import { LocalShardHandle } from '../local-shard-handle.ts';
import { assertSameAnswers, exerciseReplication, exerciseShardHandle, PARITY_MAPPING } from '../shard-handle-parity.fixture.ts';
import type { ShardHandle } from '../shard-handle.ts';
import { RemoteShardHandle } from './remote-shard-handle.ts';
import { RemoteTransport } from './remote-transport.ts';

const logger = pino({ level: 'silent' });
let root: string;
let config: NodeConfig;
let node: NodeService;
let secret: string;
let server: { app: FastifyInstance; address: string };
let transport: RemoteTransport;
/** The copies the test servers serve, by uuid. */
const served = new Map<string, ShardHandle>();
/** The path of every request the test server received, in order. */
const requestPaths: string[] = [];
/** The catalog revision the test servers have "applied". */
let appliedRevision = 0;

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'trove-remote-'));
  config = loadConfig({ flags: { 'path.data': path.join(root, 'node') }, env: {} });
  node = await NodeService.open({ config, logger });
  secret = node.coordinator.internalSecret();
  server = await startServer();
  transport = new RemoteTransport({ nodeId: 'caller', secret });
});

after(async () => {
  await transport?.close();
  await server?.app.close();
  for (const handle of served.values()) await handle.close().catch(() => undefined);
  await node?.close();
  await rm(root, { recursive: true, force: true });
});

/** A node's HTTP surface as far as this test needs it: JSON parsers, errors, roles, security, the internal route. */
async function startServer(): Promise<{ app: FastifyInstance; address: string }> {
  const app = Fastify();
  app.addHook('onRequest', async (request) => {
    requestPaths.push(request.url);
  });
  installJsonParsers(app);
  installErrorHandling(app);
  requireRouteRoles(app);
  await installSecurity(app, { node, config, env: {}, nodeCredential: new HmacNodeCredentialVerifier(secret) });
  const waitForRevision = async (revision: number): Promise<void> => {
    while (appliedRevision < revision) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  await app.register(internalShardRoutes, { lookup: (uuid) => served.get(uuid), waitForRevision });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, address };
}

function openShard(uuid: string, dirName: string): Promise<LocalShardHandle> {
  const spec = { dir: path.join(root, dirName), uuid, mapping: PARITY_MAPPING, settings: DEFAULT_ENGINE_SETTINGS, bindings: { shard: uuid } };
  return LocalShardHandle.open(spec, logger);
}

/** Serves a new shard copy `uuid`; returns the handle on its node and a remote handle to it. */
async function serve(uuid: string): Promise<{ owner: LocalShardHandle; remote: RemoteShardHandle }> {
  const owner = await openShard(uuid, `${uuid}-served`);
  served.set(uuid, owner);
  return { owner, remote: new RemoteShardHandle(uuid, { id: 'serving', address: server.address }, transport) };
}

function isUnavailable(pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof CatalogError && error.code === 'shard_unavailable' && pattern.test(error.message);
}

/** Polls `condition` every 10 ms; fails after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A handle that counts its `waitForChanges` calls still outstanding. */
function countingWaits(handle: ShardHandle): { handle: ShardHandle; outstanding: () => number } {
  let outstanding = 0;
  const wrapped = new Proxy(handle, {
    get(target, property) {
      if (property !== 'waitForChanges') {
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: Parameters<ShardHandle['waitForChanges']>) => {
        outstanding++;
        try {
          return await target.waitForChanges(...args);
        } finally {
          outstanding--;
        }
      };
    },
  });
  return { handle: wrapped, outstanding: () => outstanding };
}

test('every method answers through the internal API as the LocalShardHandle does', async () => {
  const local = await openShard('parity', 'parity-local');
  const { owner, remote } = await serve('parity');
  const [localAnswers, remoteAnswers] = await Promise.all([exerciseShardHandle(local), exerciseShardHandle(remote, owner)]);
  assertSameAnswers(remoteAnswers, localAnswers, 'remote vs local');
  const batch = remoteAnswers.find(([name]) => name === 'writeBatch')![1] as Array<Record<string, unknown>>;
  assert.equal(batch[0]!.error, 'EngineError', 'a failed batch item is an EngineError');
  assert.equal(batch[0]!.code, 'version_conflict');
});

test('replication calls answer through the internal API as through LocalShardHandles', async () => {
  const [localPrimary, localReplica] = await Promise.all([openShard('repl-p', 'repl-p-local'), openShard('repl-r', 'repl-r-local')]);
  const [primary, replica] = await Promise.all([serve('repl-p'), serve('repl-r')]);
  const [localAnswers, remoteAnswers] = await Promise.all([exerciseReplication(localPrimary, localReplica), exerciseReplication(primary.remote, replica.remote)]);
  assertSameAnswers(remoteAnswers, localAnswers, 'remote vs local');
  await Promise.all([localPrimary.close(), localReplica.close()]);
});

test('calls to one node in the same turn go as one request, and each gets its own answer', async () => {
  const first = await serve('batch-a');
  const second = await serve('batch-b');
  await first.remote.write({ kind: 'index', id: '1', source: { title: 'batched' } });
  const missing = new RemoteShardHandle('batch-missing', { id: 'serving', address: server.address }, transport);
  const before = requestPaths.length;
  const [got, counted, absent, refused] = await Promise.allSettled([
    first.remote.get('1'),
    second.remote.count(undefined),
    missing.get('x'),
    first.remote.count({ no_such_query: {} }),
  ]);
  assert.deepEqual(requestPaths.slice(before), ['/_internal/shards/_batch'], 'one request for four calls');
  assert.equal(got.status === 'fulfilled' && got.value?.source.title, 'batched');
  assert.equal(counted.status === 'fulfilled' && counted.value, 0);
  assert.ok(absent.status === 'rejected' && isUnavailable(/^node \[serving\] has no open copy of shard \[batch-missing\]$/)(absent.reason));
  assert.ok(refused.status === 'rejected' && refused.reason instanceof EngineError && refused.reason.code === 'parsing', String(refused.status === 'rejected' && refused.reason));
  const alone = requestPaths.length;
  await first.remote.exists('1');
  assert.deepEqual(requestPaths.slice(alone), ['/_internal/shards/batch-a/exists'], 'a call alone goes alone');
});

test('a remote copy is managed by its own node: close is refused, mapping and settings are no calls', async () => {
  const { owner, remote } = await serve('managed');
  await assert.rejects(remote.close(), (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && /closed by that node/.test(error.message));
  await remote.setMapping({ properties: { title: { type: 'keyword' } } });
  await remote.updateSettings({ epochMaxDocs: 1 });
  await remote.write({ kind: 'index', id: '1', source: { title: 'still open' } });
  assert.equal((await owner.stats()).docs, 1);
});

test('a search runs its query phase and its fetch phase through the remote handle', async () => {
  const { remote } = await serve('search');
  const docs = [1, 2, 3, 4].map((n) => ({ kind: 'index' as const, id: `d${n}`, source: { title: n % 2 ? 'odd fox' : 'even fox', n } }));
  const written = await remote.writeBatch(docs);
  assert.ok(written.every((item) => !(item instanceof Error)));
  const scored = await remote.query({ query: { match: { title: 'odd' } }, from: 0, size: 10, aggs: { total: { sum: { field: 'n' } } } });
  assert.equal(scored.result.total.value, 2);
  assert.ok(scored.result.hits.every((hit) => hit.score > 0));
  assert.deepEqual(scored.result.aggs, { total: { type: 'stats', format: 'number', count: 2, sum: 4, min: 1, max: 3 } });
  const fetched = await remote.fetch(scored.context, scored.result.hits);
  assert.deepEqual(fetched.map((doc) => doc.id).sort(), ['d1', 'd3']);
  const sorted = await remote.query({ from: 0, size: 2, sort: [{ n: 'desc' }] });
  assert.ok(sorted.result.hits.every((hit) => Number.isNaN(hit.score)), 'a score the sort did not need is NaN, as locally');
  assert.deepEqual(sorted.result.hits.map((hit) => hit.sort), [[4], [3]]);
  assert.deepEqual((await remote.fetch(sorted.context, sorted.result.hits)).map((doc) => doc.source?.n), [4, 3]);
});

test('the route requires the node credential or an admin key', async () => {
  await serve('guarded');
  const call = (authorization?: string) =>
    request(`${server.address}/_internal/shards/guarded/exists`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
      body: JSON.stringify({ args: ['x'] }),
    });
  const missing = await call();
  assert.equal(missing.statusCode, 401);
  await missing.body.dump();
  const stale = await call(nodeCredentialHeader(secret, 'caller', Date.now() - 10 * 60_000));
  assert.equal(stale.statusCode, 401, 'a token older than the allowed clock skew');
  await stale.body.dump();
  const foreign = await call(nodeCredentialHeader(Buffer.from('another cluster').toString('base64url'), 'caller'));
  assert.equal(foreign.statusCode, 401);
  await foreign.body.dump();
  const reader = (await server.app.security.keys.create({ name: 'reader', role: 'read' })).key;
  const forbidden = await call(`Bearer ${reader}`);
  assert.equal(forbidden.statusCode, 403);
  assert.match(await forbidden.body.text(), /requires role \[admin\]/);
  const adminKey = (await readFile(path.join(config.values['path.data'], 'bootstrap-admin.key'), 'utf8')).trim();
  const admin = await call(`Bearer ${adminKey}`);
  assert.equal(admin.statusCode, 200);
  assert.deepEqual(await admin.body.json(), { ok: true, value: false });

  const wrongSecret = new RemoteTransport({ nodeId: 'caller', secret: Buffer.from('wrong secret').toString('base64url') });
  try {
    const handle = new RemoteShardHandle('guarded', { id: 'serving', address: server.address }, wrongSecret);
    await assert.rejects(handle.exists('x'), isUnavailable(/^node \[serving\] did not answer for shard \[guarded\]: it refused this node's credential \(HTTP 401\)/));
  } finally {
    await wrongSecret.close();
  }
});

test('an unknown shard, an unknown method and a malformed body', async () => {
  const remote = new RemoteShardHandle('no-such-shard', { id: 'serving', address: server.address }, transport);
  await assert.rejects(remote.get('x'), isUnavailable(/^node \[serving\] has no open copy of shard \[no-such-shard\]$/));
  await serve('bodies');
  const headers = { 'content-type': 'application/json', authorization: nodeCredentialHeader(secret, 'caller') };
  const close = await request(`${server.address}/_internal/shards/bodies/close`, { method: 'POST', headers, body: '{"args":[]}' });
  assert.equal(close.statusCode, 400);
  assert.equal(((await close.body.json()) as { error: { code: string } }).error.code, 'illegal_argument');
  const noArgs = await request(`${server.address}/_internal/shards/bodies/get`, { method: 'POST', headers, body: '{}' });
  assert.equal(noArgs.statusCode, 400);
  await noArgs.body.dump();
});

test('a stopped or silent node is shard_unavailable within the timeout', async () => {
  const second = await startServer();
  const { handle: counted, outstanding } = countingWaits(await openShard('stopping', 'stopping-served'));
  served.set('stopping', counted);
  const remote = new RemoteShardHandle('stopping', { id: 'second', address: second.address }, transport);
  const bounds = await remote.changeBounds();
  const waiting = remote.waitForChanges(bounds.durableSeq, 60_000);
  await until(() => outstanding() === 1, 5_000, 'the wait to reach the serving node');
  const closing = Date.now();
  await second.app.close();
  assert.ok(Date.now() - closing < 5_000, 'a closing server ends its long polls');
  assert.deepEqual(await waiting, bounds);
  assert.equal(outstanding(), 0);
  const started = Date.now();
  await assert.rejects(remote.get('x'), isUnavailable(/^node \[second\] did not answer for shard \[stopping\]: .*ECONNREFUSED/));
  assert.ok(Date.now() - started < 5_000);

  const sockets = new Set<Socket>();
  const silent: Server = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  const impatient = new RemoteTransport({ nodeId: 'caller', secret, timeoutMs: 200 });
  try {
    const hung = new RemoteShardHandle('stopping', { id: 'silent', address: `http://127.0.0.1:${port}` }, impatient);
    const asked = Date.now();
    await assert.rejects(hung.exists('x'), isUnavailable(/^node \[silent\] did not answer for shard \[stopping\]: no answer within 200 ms$/));
    assert.ok(Date.now() - asked < 2_000);
  } finally {
    await impatient.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test('aborting a remote wait resolves it at once and ends the wait on the serving node', async () => {
  const { owner } = await serve('waiting');
  const { handle: counted, outstanding } = countingWaits(owner);
  served.set('waiting', counted);
  const remote = new RemoteShardHandle('waiting', { id: 'serving', address: server.address }, transport);
  const bounds = await remote.changeBounds();
  const controller = new AbortController();
  const waiting = remote.waitForChanges(bounds.durableSeq, 60_000, controller.signal);
  await until(() => outstanding() === 1, 5_000, 'the wait to reach the serving node');
  const aborted = Date.now();
  controller.abort();
  assert.deepEqual(await waiting, bounds, 'the bounds last answered');
  assert.ok(Date.now() - aborted < 1_000);
  await until(() => outstanding() === 0, 5_000, 'the serving node to end its wait');

  // A wait that is answered (a write arrived) leaves nothing behind either.
  const answered = remote.waitForChanges(bounds.durableSeq, 60_000);
  await until(() => outstanding() === 1, 5_000, 'the second wait to reach the serving node');
  await remote.write({ kind: 'index', id: 'late', source: { title: 'late' } });
  assert.equal((await answered).durableSeq, bounds.durableSeq + 1);
  assert.equal(outstanding(), 0);
});

test('long polls do not hold the sockets other calls need', async () => {
  const { owner } = await serve('polled');
  const narrow = new RemoteTransport({ nodeId: 'caller', secret, connections: 1 });
  try {
    const remote = new RemoteShardHandle('polled', { id: 'serving', address: server.address }, narrow);
    const bounds = await remote.changeBounds();
    const controller = new AbortController();
    const waits = [1, 2, 3].map(() => remote.waitForChanges(bounds.durableSeq, 60_000, controller.signal));
    const asked = Date.now();
    assert.equal(await remote.exists('nothing'), false);
    assert.deepEqual(await remote.stats(), await owner.stats());
    assert.ok(Date.now() - asked < 2_000, 'calls pass the waits held on the same node');
    controller.abort();
    await Promise.all(waits);
  } finally {
    await narrow.close();
  }
});

test('a copy still opening is found once the serving node applied the caller\'s catalog revision', async () => {
  const routedAt = appliedRevision + 1;
  const following = new RemoteTransport({ nodeId: 'caller', secret, revision: () => routedAt });
  try {
    const remote = new RemoteShardHandle('opening', { id: 'serving', address: server.address }, following);
    const answer = remote.exists('x');
    await new Promise((resolve) => setTimeout(resolve, 50));
    served.set('opening', await openShard('opening', 'opening-served'));
    appliedRevision = routedAt;
    assert.equal(await answer, false);
  } finally {
    await following.close();
  }
});
