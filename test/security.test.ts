/**
 * Security end to end against real servers with security on: the first start's admin key, the
 * key API (issue once, list without secrets, revoke at once), expiry, namespace-limited listings,
 * requests refused before their body is read, `TROVE_API_KEY`, the CLI reading the bootstrap key,
 * and no key material in any log line or in any response after the one that issued it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, call, sendRefusable, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

let server: TroveServer;
let adminKey: string;
/** Every key string issued during the run, and every response received after its issue. */
const issuedKeys: string[] = [];
const responsesAfterIssue: Array<{ text: string; headers: string; issuedBefore: number }> = [];

/** Calls the server and keeps the response to check later that no key leaks into it. */
async function request(method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  const response = await call(server, method, path, options);
  responsesAfterIssue.push({ text: response.text, headers: JSON.stringify(response.headers), issuedBefore: issuedKeys.length });
  return response;
}

/** Issues a key with the admin key; the only response allowed to carry it. */
async function issue(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const response = await call(server, 'POST', '/_security/api_key', { apiKey: adminKey, json: body });
  assert.equal(response.status, 200, response.text);
  issuedKeys.push(response.body.api_key);
  return { id: response.body.id, key: response.body.api_key };
}

before(async () => {
  server = await startServer({ security: true, settings: { 'log.level': 'debug' } });
  adminKey = await server.bootstrapKey();
  issuedKeys.push(adminKey);
});

after(async () => {
  await server?.cleanup();
});

test('the first start writes an admin key to bootstrap-admin.key (0600) and logs where it is', async () => {
  assert.match(adminKey, /^trove_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  assert.equal((await stat(join(server.dataDir, 'bootstrap-admin.key'))).mode & 0o777, 0o600);
  assert.ok(server.output().includes(join(server.dataDir, 'bootstrap-admin.key')));
  const me = await request('GET', '/_security/_authenticate', { apiKey: adminKey });
  assert.equal(me.status, 200);
  assert.equal(me.body.role, 'admin');
  assert.equal(me.body.name, 'bootstrap-admin');
  assert.equal(me.body.namespaces, null);
});

test('no key, a malformed header, a wrong key: 401 with WWW-Authenticate: Bearer and a security_exception', async () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{}, /missing authentication credentials/],
    [{ authorization: 'Bearer' }, /Authorization header/],
    [{ authorization: `Basic ${Buffer.from('elastic:changeme').toString('base64')}` }, /unsupported authorization scheme/],
    [{ authorization: `Bearer ${adminKey.slice(0, -2)}xx` }, /unable to authenticate/],
  ];
  for (const [headers, reason] of cases) {
    const response = await request('GET', '/_cat/collections', { headers });
    assert.equal(response.status, 401, JSON.stringify(headers));
    assert.match(String(response.headers['www-authenticate']), /^Bearer realm="trove"/);
    assert.equal(response.body.error.type, 'security_exception');
    assert.match(response.body.error.reason, reason);
  }
  const stats = await request('GET', '/_node/_local/stats', { apiKey: adminKey });
  assert.equal(stats.status, 200);
  const failures = stats.body.security.authentication_failures;
  assert.ok(failures.missing >= 1 && failures.malformed >= 2 && failures.unknown >= 1, JSON.stringify(failures));
});

test('a key is returned once; listings show id, name, role, namespaces, dates and last use, never a secret', async () => {
  const { id, key } = await issue({ name: 'reporting', role: 'read', namespaces: ['default'], expires_in_secs: 3600 });
  const used = await request('GET', '/_search', { apiKey: key });
  assert.equal(used.status, 200);
  const listed = await request('GET', '/_security/api_key', { apiKey: adminKey });
  const entry = listed.body.api_keys.find((candidate: { id: string }) => candidate.id === id);
  assert.deepEqual(Object.keys(entry).sort(), ['created', 'expired', 'expires', 'id', 'last_used', 'name', 'namespaces', 'role']);
  assert.equal(entry.role, 'read');
  assert.deepEqual(entry.namespaces, ['default']);
  assert.equal(entry.expired, false);
  assert.ok(Date.parse(entry.expires) - Date.parse(entry.created) === 3_600_000);
  assert.ok(entry.last_used !== null && Date.parse(entry.last_used) >= Date.parse(entry.created));
  const invalid = await request('POST', '/_security/api_key', { apiKey: adminKey, json: { name: 'x', role: 'superuser' } });
  assert.equal(invalid.status, 400);
  const badNamespace = await request('POST', '/_security/api_key', { apiKey: adminKey, json: { name: 'x', role: 'read', namespaces: ['Bad Name'] } });
  assert.equal(badNamespace.status, 400);
});

test('a revoked key is refused on the very next request', async () => {
  const { id, key } = await issue({ name: 'short-lived', role: 'write' });
  assert.equal((await request('GET', '/_search', { apiKey: key })).status, 200);
  const revoked = await request('DELETE', `/_security/api_key/${id}`, { apiKey: adminKey });
  assert.equal(revoked.status, 200, revoked.text);
  const after = await request('GET', '/_search', { apiKey: key });
  assert.equal(after.status, 401);
  assert.equal((await request('DELETE', `/_security/api_key/${id}`, { apiKey: adminKey })).status, 404);
  const bootstrapId = (await request('GET', '/_security/_authenticate', { apiKey: adminKey })).body.id;
  const last = await request('DELETE', `/_security/api_key/${bootstrapId}`, { apiKey: adminKey });
  assert.equal(last.status, 400, 'the last admin key cannot be revoked');
});

test('an expired key is refused with 401', async () => {
  const { key } = await issue({ name: 'one-second', role: 'read', expires_in_secs: 1 });
  assert.equal((await request('GET', '/_count', { apiKey: key })).status, 200);
  await sleep(1100);
  const expired = await request('GET', '/_count', { apiKey: key });
  assert.equal(expired.status, 401);
  assert.match(expired.body.error.reason, /expired/);
});

test('a key limited to namespaces sees only them in every listing and search', async () => {
  const admin = { apiKey: adminKey };
  for (const namespace of ['shop', 'blog']) {
    assert.equal((await request('PUT', `/_namespace/${namespace}`, admin)).status, 200);
    assert.equal((await request('PUT', `/${namespace}-posts`, { ...admin, json: { namespace } })).status, 200);
    assert.equal((await request('PUT', `/${namespace}-posts/_doc/1`, { ...admin, json: { title: namespace } })).status, 201);
    assert.equal((await request('POST', `/${namespace}-posts/_compact`, admin)).status, 200);
  }
  assert.equal((await request('PUT', '/shop-old', { ...admin, json: { namespace: 'shop' } })).status, 200);
  assert.equal((await request('PUT', '/blog-old', { ...admin, json: { namespace: 'blog' } })).status, 200);
  assert.equal((await request('DELETE', '/shop-old', admin)).status, 200);
  assert.equal((await request('DELETE', '/blog-old', admin)).status, 200);
  const shop = { apiKey: (await issue({ name: 'shop-ops', role: 'manage', namespaces: ['shop'] })).key };

  const cat = await request('GET', '/_cat/collections?format=json&h=index', shop);
  assert.deepEqual(cat.body.map((row: { index: string }) => row.index), ['shop-posts']);
  const namespaces = await request('GET', '/_namespace', shop);
  assert.deepEqual(namespaces.body.namespaces.map((namespace: { name: string }) => namespace.name), ['shop']);
  const trash = await request('GET', '/_cluster/trash', shop);
  assert.deepEqual(Object.keys(trash.body.namespaces), ['shop']);
  assert.equal(trash.body.total_items, 1);
  const jobs = await request('GET', '/_jobs', shop);
  assert.deepEqual([...new Set(jobs.body.jobs.map((job: { collection: string }) => job.collection))], ['shop-posts']);
  const segments = await request('GET', '/_cat/segments?format=json&h=index', shop);
  assert.ok(segments.body.every((row: { index: string }) => row.index === 'shop-posts'));
  const everything = await request('GET', '/*/_search', shop);
  assert.deepEqual(everything.body.hits.hits.map((hit: { _index: string }) => hit._index), ['shop-posts']);
  const all = await request('GET', '/_search', shop);
  assert.deepEqual(all.body.hits.hits.map((hit: { _index: string }) => hit._index), ['shop-posts']);
  const collections = await request('GET', '/_all', shop);
  assert.deepEqual(Object.keys(collections.body), ['shop-posts']);
  const nothing = await request('GET', '/blog-*/_search', shop);
  assert.equal(nothing.status, 200);
  assert.equal(nothing.body.hits.hits.length, 0);

  const outside = await request('GET', '/blog-posts/_doc/1', shop);
  assert.equal(outside.status, 403);
  assert.match(outside.body.error.reason, /limited to namespaces \[shop\]; collection \[blog-posts\] is outside the key's namespaces/);
  assert.equal((await request('PUT', '/blog-new', { ...shop, json: { namespace: 'blog' } })).status, 403);
  assert.equal((await request('PUT', '/shop-new', { ...shop, json: { namespace: 'shop' } })).status, 200);
  assert.equal((await request('DELETE', '/_namespace/blog', shop)).status, 403);
  const bulk = await request('POST', '/_bulk', {
    ...shop,
    body: `${JSON.stringify({ index: { _index: 'shop-posts', _id: '9' } })}\n{}\n${JSON.stringify({ index: { _index: 'blog-posts', _id: '9' } })}\n{}\n`,
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(bulk.status, 403);
  assert.equal((await request('GET', '/shop-posts/_doc/9', shop)).body.found, false, 'a refused bulk applies nothing');

  const shopAdmin = { apiKey: (await issue({ name: 'shop-admin', role: 'admin', namespaces: ['shop'] })).key };
  const visibleKeys = await request('GET', '/_security/api_key', shopAdmin);
  assert.deepEqual(visibleKeys.body.api_keys.map((entry: { name: string }) => entry.name).sort(), ['shop-admin', 'shop-ops']);
  assert.equal((await request('POST', '/_security/api_key', { ...shopAdmin, json: { name: 'escalate', role: 'read' } })).status, 403);
});

test('requests without a key are refused before the body is read; with a key, too large is 413', async () => {
  const chunks = Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024, 0x20));
  const headers = { 'content-type': 'application/json', 'content-length': String(64 * 64 * 1024) };
  const anonymous = await sendRefusable(server, 'POST', '/_search', chunks, headers);
  assert.equal(anonymous.status, 401);
  const local = await startServer({ security: true, settings: { 'http.max_content_length': '1kb' } });
  try {
    const key = await local.bootstrapKey();
    const tooLarge = await sendRefusable(local, 'POST', '/_search', chunks, { ...headers, authorization: `Bearer ${key}` });
    assert.equal(tooLarge.status, 413);
  } finally {
    await local.cleanup();
  }
});

test('TROVE_API_KEY sets the first admin key instead of a generated file; keys survive a restart', async () => {
  const supplied = 'operator-supplied-key-for-the-e2e-test';
  const local = await startServer({ security: true, env: { TROVE_API_KEY: supplied } });
  try {
    await assert.rejects(stat(join(local.dataDir, 'bootstrap-admin.key')), { code: 'ENOENT' });
    assert.equal((await call(local, 'GET', '/_cat/collections', { apiKey: supplied })).status, 200);
    const issued = await call(local, 'POST', '/_security/api_key', { apiKey: supplied, json: { name: 'kept', role: 'read' } });
    await local.restart();
    assert.equal((await call(local, 'GET', '/_search', { apiKey: issued.body.api_key })).status, 200);
    assert.equal((await call(local, 'GET', '/_cat/collections', { apiKey: supplied })).status, 200);
    assert.ok(!local.output().includes(supplied));
  } finally {
    await local.cleanup();
  }
});

test('trove import finds the bootstrap key through --data', async () => {
  assert.equal((await request('PUT', '/imported', { apiKey: adminKey })).status, 200);
  const workDir = await mkdtemp(join(tmpdir(), 'trove-import-key-'));
  try {
    const file = join(workDir, 'docs.ndjson');
    await writeFile(file, Array.from({ length: 50 }, (_, index) => JSON.stringify({ n: index })).join('\n') + '\n');
    const run = async (extra: string[]) => {
      const child = spawn(
        process.execPath,
        [join(REPO_ROOT, 'bin', 'trove.js'), 'import', file, '--collection', 'imported', '--url', server.url, '--no-progress', '--restart', ...extra],
        { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TROVE_API_KEY: '' } },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { code, output };
    };
    const withoutKey = await run([]);
    assert.equal(withoutKey.code, 2, withoutKey.output);
    assert.match(withoutKey.output, /requires a valid API key/);
    const withData = await run(['--data', server.dataDir]);
    assert.equal(withData.code, 0, withData.output);
    assert.equal((await request('GET', '/imported/_count', { apiKey: adminKey })).body.count, 50);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
});

test('key material never appears in the logs or in any response after the one that issued it', async () => {
  assert.ok(issuedKeys.length >= 5);
  const output = server.output();
  assert.ok(output.includes('authentication failed'), 'failures are logged');
  for (const key of issuedKeys) {
    assert.ok(!output.includes(key), 'a key in the server output');
    const secret = key.slice('trove_0123456789abcdef_'.length);
    assert.ok(!output.includes(secret), 'a key secret in the server output');
  }
  for (const response of responsesAfterIssue) {
    for (const key of issuedKeys.slice(0, response.issuedBefore)) {
      assert.ok(!response.text.includes(key) && !response.headers.includes(key), `a key in a later response: ${response.text.slice(0, 200)}`);
    }
  }
});
