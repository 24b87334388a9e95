/**
 * Hostile HTTP against real servers with security on (issue 12, HTTP items): authentication before
 * routing, an empty trailing id never widening a delete, API key lifetimes and the admin lockout,
 * parser errors in the ES error body, what a key limited to namespaces may learn, salted key
 * hashes (and old unsalted records still working), bounded connections and slow clients cut.
 * No answer in this file may be a 5xx.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

let server: TroveServer;
/** The admin key of the main server: the bootstrap key, until the lockout test replaces it. */
let adminKey: string;

before(async () => {
  server = await startServer({ security: true });
  adminKey = await server.bootstrapKey();
});

after(async () => {
  await server?.cleanup();
});

/** Calls `target` and fails on any 5xx. */
async function request(target: { url: string }, method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  const response = await call(target, method, path, options);
  assert.ok(response.status < 500, `${method} ${path} -> ${response.status} ${response.text.slice(0, 300)}`);
  return response;
}

/** Checks the ES error body `{error:{type,reason,root_cause},status}` with the given status. */
function assertEsError(body: any, status: number, label: string): void {
  assert.equal(body?.status, status, label);
  assert.equal(typeof body.error.type, 'string', label);
  assert.ok(typeof body.error.reason === 'string' && body.error.reason.length > 0, label);
  assert.ok(Array.isArray(body.error.root_cause) && body.error.root_cause[0].type === body.error.type, label);
}

/** Issues a key with the admin key. */
async function issue(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const response = await request(server, 'POST', '/_security/api_key', { apiKey: adminKey, json: body });
  assert.equal(response.status, 200, response.text);
  return { id: response.body.id, key: response.body.api_key };
}

/** A raw TCP connection to `target` that collects what the server sends and notes when it closes. */
interface RawConnection {
  socket: Socket;
  received(): string;
  closed: Promise<number>;
}

/** Opens a raw connection (resolves once connected). */
async function rawConnection(target: TroveServer): Promise<RawConnection> {
  const socket = connect(target.port, '127.0.0.1');
  let data = '';
  socket.on('data', (chunk) => (data += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received: () => data, closed };
}

/** Sends raw bytes and returns the status and body of the answer the server sends before closing. */
async function rawExchange(target: TroveServer, bytes: string): Promise<{ status: number; body: any; text: string }> {
  const connection = await rawConnection(target);
  connection.socket.write(bytes);
  await Promise.race([connection.closed, sleep(15_000)]);
  connection.socket.destroy();
  const text = connection.received();
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
  let body: unknown = null;
  try {
    body = JSON.parse(bodyText);
  } catch {
    // not JSON: the assertions below say so
  }
  assert.ok(status < 500, `raw ${JSON.stringify(bytes.slice(0, 60))} -> ${text.slice(0, 300)}`);
  return { status, body, text };
}

test('item 8: without a valid key, unknown paths and wrong methods are 401, not 400/405; with one, as before', async () => {
  const strangers: Array<Record<string, string>> = [{}, { authorization: 'Bearer trove_0123456789abcdef_' + 'x'.repeat(43) }, { authorization: 'Basic Zm9vOmJhcg==' }];
  for (const headers of strangers) {
    for (const [method, path] of [['GET', '/no/such/route/here'], ['PATCH', '/_search'], ['DELETE', '/target/_search'], ['PUT', '/_cluster/health'], ['GET', '/_cluster/trash/x/y/z']]) {
      const response = await request(server, method, path, { headers });
      const label = `${method} ${path} ${JSON.stringify(headers)} -> ${response.status} ${response.text}`;
      assert.equal(response.status, 401, label);
      assert.match(String(response.headers['www-authenticate']), /^Bearer/, label);
      assert.equal(response.headers.allow, undefined, 'no method list for a stranger');
      assert.equal(response.body.error.type, 'security_exception', label);
      assertEsError(response.body, 401, label);
    }
  }
  const unknown = await request(server, 'GET', '/no/such/route/here', { apiKey: adminKey });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.type, 'no_handler_found_exception');
  const wrong = await request(server, 'DELETE', '/target/_search', { apiKey: adminKey });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.allow, 'GET, POST');
  const monitor = await issue({ name: 'monitor-only', role: 'monitor' });
  assert.equal((await request(server, 'GET', '/no/such/route/here', { apiKey: monitor.key })).status, 400, 'any valid key gets the 400, not a 403');
  assert.equal((await request(server, 'DELETE', '/target/_search', { apiKey: monitor.key })).status, 405);
});

test('item 8: an empty trash item id (DELETE /_cluster/trash/ and /_cluster/trash/?) is a 400, the trash stays', async () => {
  const admin = { apiKey: adminKey };
  assert.equal((await request(server, 'PUT', '/doomed', admin)).status, 200);
  assert.equal((await request(server, 'DELETE', '/doomed', admin)).status, 200);
  const before = await request(server, 'GET', '/_cluster/trash', admin);
  assert.equal(before.body.total_items, 1);
  for (const path of ['/_cluster/trash/', '/_cluster/trash/?', '/_cluster/trash//', '/_cluster/trash/?pretty']) {
    const response = await request(server, 'DELETE', path, admin);
    assert.equal(response.status, 400, `${path} -> ${response.text}`);
    assertEsError(response.body, 400, path);
    assert.match(response.body.error.reason, /\[item_id\]/);
  }
  assert.equal((await request(server, 'DELETE', '/_cluster/trash/', {})).status, 401, 'still authentication first');
  const after = await request(server, 'GET', '/_cluster/trash', admin);
  assert.equal(after.body.total_items, 1, 'nothing was purged');
  const empty = await request(server, 'POST', '/target/_doc/', { ...admin, json: { a: 1 } });
  assert.equal(empty.status, 400, 'the same rule for every route: an empty trailing id is named');
  assert.match(empty.body.error.reason, /\[id\]/);
});

test('item 9: expires_in_secs must be whole seconds from 1 s to ten years; nothing is created otherwise', async () => {
  const listBefore = await request(server, 'GET', '/_security/api_key', { apiKey: adminKey });
  assert.equal(listBefore.status, 200);
  const raw = ['"Infinity"', '"-Infinity"', '"1e309"', '1e309', '-1e309', '"NaN"', '1e20', '315360001', '-5', '0', '1.5', '"1.5"', '"abc"', '{}', '[]', 'null'];
  for (const value of raw) {
    const response = await request(server, 'POST', '/_security/api_key', {
      apiKey: adminKey,
      body: `{"name":"bad-lifetime","role":"read","expires_in_secs":${value}}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400, `${value} -> ${response.text}`);
    assertEsError(response.body, 400, value);
    assert.match(response.body.error.reason, /expires_in_secs/, value);
  }
  const listAfter = await request(server, 'GET', '/_security/api_key', { apiKey: adminKey });
  assert.equal(listAfter.status, 200, 'listing keeps working');
  assert.equal(listAfter.body.api_keys.length, listBefore.body.api_keys.length, 'no key was created');
  assert.ok(!listAfter.body.api_keys.some((key: { name: string }) => key.name === 'bad-lifetime'));
  const good = await request(server, 'POST', '/_security/api_key', { apiKey: adminKey, json: { name: 'decade', role: 'read', expires_in_secs: '315360000' } });
  assert.equal(good.status, 200, good.text);
  const search = await request(server, 'GET', '/_search?size=Infinity', { apiKey: adminKey });
  assert.equal(search.status, 400, 'the same coercion hole in query parameters');
  assert.match(search.body.error.reason, /\[size\]/);
});

test('item 9: a revoke that leaves no admin key valid for another hour is refused', async () => {
  const bootstrapId = (await request(server, 'GET', '/_security/_authenticate', { apiKey: adminKey })).body.id;
  const expiring = await issue({ name: 'expiring-admin', role: 'admin', expires_in_secs: 1800 });
  await issue({ name: 'scoped-admin', role: 'admin', namespaces: ['default'] });
  const refused = await request(server, 'DELETE', `/_security/api_key/${bootstrapId}`, { apiKey: expiring.key });
  assert.equal(refused.status, 400, refused.text);
  assertEsError(refused.body, 400, 'last admin');
  assert.match(refused.body.error.reason, /another hour/);
  assert.equal((await request(server, 'GET', '/_security/_authenticate', { apiKey: adminKey })).status, 200, 'the key still works');

  const lasting = await issue({ name: 'lasting-admin', role: 'admin', expires_in_secs: 7200 });
  const revoked = await request(server, 'DELETE', `/_security/api_key/${bootstrapId}`, { apiKey: lasting.key });
  assert.equal(revoked.status, 200, revoked.text);
  adminKey = lasting.key;
  assert.equal((await request(server, 'DELETE', `/_security/api_key/${lasting.id}`, { apiKey: adminKey })).status, 400, 'now the lasting one is the last');
  assert.equal((await request(server, 'DELETE', `/_security/api_key/${expiring.id}`, { apiKey: adminKey })).status, 200);
});

test('item 10: requests the HTTP parser refuses get a 400 with the ES error body', async () => {
  const cases: Array<[string, string]> = [
    ['malformed request line', 'GARBAGE\r\n\r\n'],
    ['bad HTTP version', 'GET / HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['header without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n'],
    ['space before the colon', 'GET / HTTP/1.1\r\nHost : x\r\n\r\n'],
    ['bad chunked encoding', `POST /_search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n`],
    ['both Content-Length and chunked', 'POST /_search HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['headers too large', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['undecodable URL', `GET /%E0%A4%A HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminKey}\r\nConnection: close\r\n\r\n`],
  ];
  for (const [label, bytes] of cases) {
    const answer = await rawExchange(server, bytes);
    assert.equal(answer.status, 400, `${label}: ${answer.text.slice(0, 300)}`);
    assertEsError(answer.body, 400, `${label}: ${answer.text.slice(0, 300)}`);
    assert.match(answer.text, /content-type: application\/json/i, label);
  }
  assert.equal((await request(server, 'GET', '/', { apiKey: adminKey })).status, 200, 'the node is still up');
});

test('item 11: a key limited to namespaces learns nothing of other namespaces from stats, jobs and 403s', async () => {
  const admin = { apiKey: adminKey };
  for (const namespace of ['shop', 'secretns']) assert.equal((await request(server, 'PUT', `/_namespace/${namespace}`, admin)).status, 200);
  const create = async (name: string, namespace: string): Promise<void> => {
    assert.equal((await request(server, 'PUT', `/${name}`, { ...admin, json: { namespace } })).status, 200);
    assert.equal((await request(server, 'PUT', `/${name}/_doc/1`, { ...admin, json: { title: name } })).status, 201);
  };
  const compact = async (name: string): Promise<string> => {
    const response = await request(server, 'POST', `/${name}/_compact`, admin);
    assert.equal(response.status, 200, response.text);
    const jobId = response.body.nodes[0].job_id as string;
    for (let attempt = 0; attempt < 200; attempt++) {
      if ((await request(server, 'GET', `/_jobs/${jobId}`, admin)).body.state === 'done') break;
      await sleep(50);
    }
    return jobId;
  };
  await create('shop-items', 'shop');
  await create('hidden-items', 'secretns');
  await create('recycled', 'secretns');
  const shopJob = await compact('shop-items');
  const hiddenJob = await compact('hidden-items');
  const oldJob = await compact('recycled');
  assert.equal((await request(server, 'DELETE', '/recycled', admin)).status, 200);
  await create('recycled', 'shop'); // same name, now in the key's namespace: still not the job's collection
  const hiddenUuids = (await request(server, 'GET', '/_node/_local/stats', admin)).body.segments.shards
    .filter((shard: { collection: string }) => shard.collection === 'hidden-items')
    .map((shard: { shard_uuid: string }) => shard.shard_uuid);
  assert.ok(hiddenUuids.length > 0, 'the admin sees every shard');

  const shop = { apiKey: (await issue({ name: 'shop-ops', role: 'manage', namespaces: ['shop'] })).key };
  const stats = await request(server, 'GET', '/_node/_local/stats', shop);
  assert.equal(stats.status, 200);
  assert.deepEqual([...new Set(stats.body.segments.shards.map((shard: { collection: string }) => shard.collection))].sort(), ['recycled', 'shop-items']);
  for (const secret of ['hidden-items', 'secretns', ...hiddenUuids]) assert.ok(!stats.text.includes(secret), `stats reveal ${secret}`);

  const jobs = await request(server, 'GET', '/_jobs', shop);
  assert.deepEqual(jobs.body.jobs.map((job: { job_id: string }) => job.job_id), [shopJob]);
  assert.equal((await request(server, 'GET', `/_jobs/${shopJob}`, shop)).status, 200);
  const old = await request(server, 'GET', `/_jobs/${oldJob}`, shop);
  assert.equal(old.status, 404, `an old job of another namespace is unknown to the key: ${old.text}`);
  assert.ok(!old.text.includes('secretns'));
  const hidden = await request(server, 'GET', `/_jobs/${hiddenJob}`, shop);
  assert.equal(hidden.status, 403, 'a job of an existing collection outside is refused as the collection is');

  const trash = await request(server, 'GET', '/_cluster/trash', admin);
  const oldItem = trash.body.namespaces.secretns.items[0].item_id as string;
  const secretKey = await issue({ name: 'secret-reader', role: 'read', namespaces: ['secretns'] });
  const shopAdmin = { apiKey: (await issue({ name: 'shop-admin', role: 'admin', namespaces: ['shop'] })).key };
  const refusals = [
    hidden,
    await request(server, 'GET', '/hidden-items/_doc/1', shop),
    await request(server, 'GET', '/hidden-items,shop-items/_search', shop),
    await request(server, 'POST', `/_cluster/trash/${oldItem}/_verify`, shop),
    await request(server, 'DELETE', `/_security/api_key/${secretKey.id}`, shopAdmin),
    await request(server, 'PUT', '/another', { ...shop, json: { namespace: 'secretns' } }),
  ];
  for (const refusal of refusals) {
    assert.equal(refusal.status, 403, refusal.text);
    assert.match(refusal.body.error.reason, /limited to namespaces \[shop\]/);
    assert.match(refusal.body.error.reason, /outside the key's namespaces/);
    assert.ok(!refusal.text.includes('secretns'), `a 403 names another namespace: ${refusal.text}`);
  }
});

test('item 12: key hashes are salted HMACs; an old unsalted record still authenticates after a restart', async () => {
  const side = await startServer({ security: true });
  try {
    const key = await side.bootstrapKey();
    const catalogPath = join(side.dataDir, 'catalog', 'catalog.json');
    const document = JSON.parse(await readFile(catalogPath, 'utf8'));
    const records = Object.values(document.catalog.apiKeys) as Array<{ id: string; hash: string }>;
    assert.equal(records.length, 1);
    assert.match(records[0].hash, /^hmac-sha256:[A-Za-z0-9_-]{22}:[0-9a-f]{64}$/);
    assert.ok(!records[0].hash.includes(createHash('sha256').update(key).digest('hex')), 'not the plain SHA-256');

    await side.kill('SIGTERM');
    records[0].hash = `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
    await writeFile(catalogPath, `${JSON.stringify(document, null, 1)}\n`);
    await side.restart();
    const me = await request(side, 'GET', '/_security/_authenticate', { apiKey: key });
    assert.equal(me.status, 200, 'a record of an earlier version keeps working');
    const wrong = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    assert.equal((await request(side, 'GET', '/_security/_authenticate', { apiKey: wrong })).status, 401);
  } finally {
    await side.cleanup();
  }
});

test('item 6: connections are bounded by http.max_connections; slow headers and unauthenticated bodies are cut', async () => {
  const limited = await startServer({ security: true, settings: { 'http.max_connections': '6' } });
  const open: RawConnection[] = [];
  try {
    const key = await limited.bootstrapKey();
    await sleep(500); // let the readiness poll's connection close or settle
    const started = Date.now();
    for (let index = 0; index < 12; index++) {
      try {
        open.push(await rawConnection(limited));
      } catch {
        // refused outright: also bounded
      }
    }
    await sleep(300);
    const alive = open.filter((connection) => !connection.socket.destroyed && connection.socket.readyState === 'open');
    assert.ok(alive.length <= 6, `${alive.length} of 12 connections stayed open with http.max_connections 6`);
    for (const connection of open) connection.socket.destroy();
    await sleep(200);
    assert.equal((await request(limited, 'GET', '/_security/_authenticate', { apiKey: key })).status, 200, 'the admin gets in once strangers leave');

    // Slow headers: a request line and then nothing.
    const slowHeaders = await rawConnection(limited);
    slowHeaders.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const headersCut = await Promise.race([slowHeaders.closed, sleep(20_000).then(() => 0)]);
    assert.ok(headersCut !== 0, 'a connection whose headers never end is closed');
    assert.ok(headersCut - started < 30_000);
    const timeoutAnswer = slowHeaders.received();
    if (timeoutAnswer !== '') {
      assert.match(timeoutAnswer, /^HTTP\/1\.1 400/);
      assertEsError(JSON.parse(timeoutAnswer.slice(timeoutAnswer.indexOf('\r\n\r\n') + 4)), 400, 'timeout');
    }

    // A stranger announcing a large body and trickling it: 401 at once, connection closed.
    const stranger = await rawConnection(limited);
    const sentAt = Date.now();
    stranger.socket.write('POST /_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: 1000000\r\n\r\n{');
    const trickle = setInterval(() => stranger.socket.writable && stranger.socket.write(' '), 200);
    const strangerCut = await Promise.race([stranger.closed, sleep(10_000).then(() => 0)]);
    clearInterval(trickle);
    assert.match(stranger.received(), /^HTTP\/1\.1 401/);
    assert.ok(strangerCut !== 0 && strangerCut - sentAt < 5_000, 'the connection of an unauthenticated slow body is closed at once');
  } finally {
    for (const connection of open) connection.socket.destroy();
    await limited.cleanup();
  }
});
