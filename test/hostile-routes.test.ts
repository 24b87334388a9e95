/**
 * Every route against every class of hostile input (issue 12), on a real server with security on
 * and its shards in the HTTP thread (`node.shard_workers: 0`, where a long request would hold the
 * loop): reserved names in path parameters, query parameters and bodies; numbers out of every
 * bound; pathological wildcard and query strings; oversized clause, range and term lists; broken
 * and deeply nested JSON; and requests without a key. Each answer must be an ES error or a
 * success, never a 5xx; no request may take 2 s, nor hold the event loop that long (a probe request
 * is answered throughout); and the node's state must be as it was. The route list comes from the
 * server itself, so a new route is swept without being listed here.
 *
 * Also here: a long query phase in the HTTP thread yields (item 4) and obeys `timeout`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildServer } from '../src/api/server.ts';
import type { RouteRoleEntry } from '../src/api/roles.ts';
import { loadConfig } from '../src/config/load-config.ts';
import { NodeService } from '../src/node/node-service.ts';
import { call, ndjson, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

/** The longest a hostile request, or the probe answered while it runs, may take. */
const MAX_REQUEST_MS = 2_000;

let server: TroveServer;
let adminKey: string;

/** The routes a server registers, read from an in-process server on a scratch data path. */
async function registeredRoutes(): Promise<readonly RouteRoleEntry[]> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-routes-'));
  const logger = pino({ level: 'silent' });
  const config = loadConfig({ flags: { 'path.data': dataPath, 'security.enabled': 'false', 'node.shard_workers': '0' }, env: {} });
  const node = await NodeService.open({ config, logger });
  try {
    const app = await buildServer({ node, config, logger });
    await app.ready();
    const routes = [...app.routeRoles];
    await app.close();
    return routes;
  } finally {
    await node.close();
    await rm(dataPath, { recursive: true, force: true });
  }
}

/** Admin call that must succeed. */
async function admin(method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  const response = await call(server, method, path, { ...options, apiKey: adminKey });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return response;
}

before(async () => {
  server = await startServer({ security: true, settings: { 'node.shard_workers': '0', 'epoch.max_docs': '4000' } });
  adminKey = await server.bootstrapKey();
  await admin('PUT', '/_namespace/team');
  await admin('PUT', '/hostile', { json: { namespace: 'team', mappings: { properties: { title: { type: 'text' }, n: { type: 'long' }, tag: { type: 'keyword' } } } } });
  await admin('PUT', '/hostile/_doc/1', { json: { title: 'the one', n: 1, tag: 'a' } });
  await admin('POST', '/_security/api_key', { json: { name: 'reader', role: 'read' } });
});

after(async () => {
  await server?.cleanup();
});

/**
 * Path parameter values: reserved segments. `constructor` and `prototype` are legal collection and
 * namespace names (as in Elasticsearch), so a create route may create them; everything else a
 * hostile request reaches must stay as it was, and the listings must keep working with them.
 */
const LEGAL_RESERVED = new Set(['constructor', 'prototype']);

/** What must not change: collections with their mappings and counts, namespaces, keys, the trash, a document. */
async function stateSnapshot(): Promise<string> {
  const parts = await Promise.all([
    admin('GET', '/_cat/collections?format=json&h=index,namespace,docs.count'),
    admin('GET', '/_mapping'),
    admin('GET', '/_namespace'),
    admin('GET', '/_security/api_key'),
    admin('GET', '/_cluster/trash'),
    admin('GET', '/hostile/_doc/1'),
  ]);
  const kept = (name: string): boolean => !LEGAL_RESERVED.has(name);
  const collections = parts[0].body.filter((row: { index: string }) => kept(row.index));
  const mappings = Object.entries(parts[1].body).filter(([name]) => kept(name));
  const namespaces = parts[2].body.namespaces.filter((namespace: { name: string }) => kept(namespace.name));
  const keys = parts[3].body.api_keys.map((key: { id: string; name: string; role: string }) => [key.id, key.name, key.role]);
  const trash = Object.entries(parts[4].body.namespaces as Record<string, { items: Array<{ name: string; item_id: string }> }>)
    .filter(([namespace]) => kept(namespace))
    .map(([namespace, group]) => [namespace, group.items.filter((item) => kept(item.name)).map((item) => item.item_id)])
    .filter(([, items]) => items.length > 0);
  return JSON.stringify([collections, mappings, namespaces, keys, trash, parts[5].body]);
}
const STARS = '*a*a*a*a*a*a*a*b';

/** One hostile request shape: the query string and body it adds to a route. */
interface HostileCase {
  name: string;
  query?: string;
  options?: CallOptions;
}

/** Every class of hostile input, as query parameters and as bodies. */
function hostileCases(): HostileCase[] {
  const json = (name: string, body: unknown): HostileCase => ({ name, options: { json: body } });
  return [
    { name: 'reserved names in parameters', query: '__proto__=1&constructor=x&prototype=y' },
    { name: 'numbers out of bounds in parameters', query: 'size=1e308&from=18446744073709551616&timeout=Infinity&wait_for_completion=%7B%7D' },
    { name: 'pathological wildcards and query strings in parameters', query: `_source_includes=${STARS}&_source_excludes=${'x'.repeat(100_000)}&q=${encodeURIComponent('(a|'.repeat(5_000))}` },
    json('reserved field names in a body', {
      __proto__: { polluted: true },
      constructor: { prototype: { polluted: true } },
      mappings: { properties: { '__proto__.unknown': { type: 'boolean', inplace: true }, 'constructor.prototype': { type: 'long' } } },
      query: { match: { '__proto__.hasOwnProperty': 'x' } },
      aggs: { toString: { terms: { field: 'constructor' } } },
    }),
    json('numbers out of bounds in a body', {
      settings: { number_of_shards: {}, number_of_replicas: 2147483648 },
      size: 1e308,
      from: 18446744073709551616,
      expires_in_secs: 'Infinity',
      n: 9223372036854775808,
    }),
    json('pathological patterns and query strings in a body', {
      _source: { includes: [STARS, 'y'.repeat(100_000)] },
      query: { simple_query_string: { query: '(a|'.repeat(25_000), fields: ['title'] } },
    }),
    json('oversized clause, term and range lists in a body', {
      query: { bool: { should: Array.from({ length: 1_100 }, (_, index) => ({ term: { tag: `t${index}` } })) } },
      aggs: { spread: { range: { field: 'n', ranges: Array.from({ length: 2_000 }, (_, index) => ({ from: index })) } } },
      ids: Array.from({ length: 70_000 }, (_, index) => String(index)),
    }),
    { name: 'broken JSON', options: { body: '{"query": {"match_all": ', headers: { 'content-type': 'application/json' } } },
    { name: 'deeply nested JSON', options: { body: '['.repeat(100_000) + ']'.repeat(100_000), headers: { 'content-type': 'application/json' } } },
    { name: 'NDJSON of hostile lines', options: { body: ndjson([{ index: { _index: '__proto__', _id: 'constructor' } }, { '__proto__.x': 1 }, { delete: { _index: 'constructor' } }]), headers: { 'content-type': 'application/x-ndjson' } } },
  ];
}

/** A concrete path for a route pattern, every parameter replaced by `value`. */
function pathFor(url: string, value: string): string {
  return url.replace(/:[a-z_]+/g, encodeURIComponent(value));
}

/** Keeps asking `GET /` every 50 ms; `worst()` is the longest answer so far (event-loop lag as a client sees it). */
function lagProbe(): { worst(): number; stop(): Promise<void> } {
  let worst = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await call(server, 'GET', '/', { apiKey: adminKey });
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    worst: () => worst,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

test('every route, every hostile input: an ES error or a success, never a 5xx, never 2 s, and the state unchanged', async () => {
  const routes = (await registeredRoutes()).filter((route) => route.role !== 'public');
  assert.ok(routes.length > 60, `${routes.length} routes`);
  const before = await stateSnapshot();
  const probe = lagProbe();
  const failures: string[] = [];
  const cases = hostileCases();
  let sent = 0;
  const send = async (method: string, path: string, options: CallOptions, label: string): Promise<void> => {
    const started = performance.now();
    let response: HttpResponse;
    try {
      response = await call(server, method, path, options);
    } catch (error) {
      failures.push(`${label}: ${method} ${path.slice(0, 80)}: ${(error as Error).message}`);
      return;
    }
    sent++;
    const took = performance.now() - started;
    if (response.status >= 500) failures.push(`${label}: ${method} ${path.slice(0, 80)} -> ${response.status} ${response.text.slice(0, 200)}`);
    if (took > MAX_REQUEST_MS) failures.push(`${label}: ${method} ${path.slice(0, 80)} took ${Math.round(took)} ms`);
    // The internal API answers its own protocol ({ok: false, error}); a document delete that finds nothing answers ES's result body;
    // a GET of aliases that names a missing one answers ES's 404 body, whose `error` is the string `alias [x] missing`.
    const missingAlias = response.status === 404 && /\/_alias(\/|$)/.test(path.split('?')[0]!) && /^alias(es)? \[.*\] missing$/.test(String(response.body?.error));
    const ownBody = path.startsWith('/_internal/') || response.body?.result === 'not_found' || missingAlias;
    if (response.status >= 400 && method !== 'HEAD' && !ownBody && typeof response.body?.error?.type !== 'string') {
      failures.push(`${label}: ${method} ${path.slice(0, 80)} -> ${response.status} without an ES error body: ${response.text.slice(0, 120)}`);
    }
  };
  try {
    for (const route of routes) {
      // Every case with `constructor` in each path parameter (a legal name, so the request gets furthest);
      // `__proto__` and `prototype` with the reserved-names case.
      const [deepest, ...others] = route.url.includes(':') ? ['constructor', '__proto__', 'prototype'].map((value) => pathFor(route.url, value)) : [route.url];
      // Without a key, every route is a 401 before anything else is looked at.
      await send(route.method, deepest!, {}, 'no key');
      for (const hostile of cases) {
        for (const path of hostile === cases[0] ? [deepest!, ...others] : [deepest!]) {
          const target = hostile.query === undefined ? path : `${path}?${hostile.query}`;
          await send(route.method, target, { ...hostile.options, apiKey: adminKey }, hostile.name);
        }
      }
    }
  } finally {
    await probe.stop();
  }
  assert.deepEqual(failures, [], `${failures.length} of ${sent} answers failed`);
  assert.ok(probe.worst() < MAX_REQUEST_MS, `the probe waited ${Math.round(probe.worst())} ms`);
  assert.equal(await stateSnapshot(), before, 'hostile requests changed nothing');
  for (const listing of ['/_cluster/health', '/_cluster/trash', '/_cat/collections', '/_namespace', '/_cluster/state', '/_node/_local/stats', '/_search']) {
    const answer = await call(server, 'GET', listing, { apiKey: adminKey });
    assert.equal(answer.status, 200, `${listing} still answers, whatever names were created: ${answer.text.slice(0, 200)}`);
  }
});

test('a long query phase in the HTTP thread yields to other requests and obeys timeout (item 4)', async () => {
  await admin('PUT', '/long', { json: { settings: { number_of_shards: 1 }, mappings: { properties: { n: { type: 'long' } } } } });
  for (let batch = 0; batch < 3; batch++) {
    const lines: unknown[] = [];
    for (let index = 0; index < 8_000; index++) lines.push({ index: {} }, { n: batch * 8_000 + index });
    await admin('POST', '/long/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  }
  // Wait until epochs put every document in segments (the in-memory layer is not sliced).
  for (let attempt = 0; attempt < 100; attempt++) {
    const segments = await admin('GET', '/_cat/segments/long?format=json');
    if (segments.body.reduce((sum: number, row: Record<string, string>) => sum + Number(row['docs.count']), 0) === 24_000) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // 20 range aggregations of 1000 ranges (the most allowed) over 24 000 documents: a second or more of work.
  const ranges = Array.from({ length: 1_000 }, (_, index) => ({ from: index * 24, to: index * 24 + 24 }));
  const aggs = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [index === 0 ? 'spread' : `spread${index}`, { range: { field: 'n', ranges } }]));
  const body = { size: 0, aggs };
  const probe = lagProbe();
  let took: number;
  try {
    const started = performance.now();
    const searched = await admin('POST', '/long/_search', { json: body });
    took = performance.now() - started;
    assert.equal(searched.body.aggregations.spread.buckets.reduce((sum: number, bucket: { doc_count: number }) => sum + bucket.doc_count, 0), 24_000);
  } finally {
    await probe.stop();
  }
  assert.ok(took > 500, `the search is long enough to matter (${Math.round(took)} ms)`);
  assert.ok(probe.worst() < took / 3, `the probe waited ${Math.round(probe.worst())} ms while the search took ${Math.round(took)} ms`);

  const started = performance.now();
  const bounded = await admin('POST', '/long/_search?timeout=20ms', { json: body });
  const boundedTook = performance.now() - started;
  assert.equal(bounded.body.timed_out, true, 'a search past its timeout says so');
  assert.ok(boundedTook < took / 2, `with timeout=20ms it answered in ${Math.round(boundedTook)} ms instead of ${Math.round(took)} ms`);
});
