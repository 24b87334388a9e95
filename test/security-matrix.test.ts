/**
 * The security matrix: every registered route is called with no key, a wrong key, an expired key,
 * a key of each role, and an admin key limited to one namespace (on a resource inside it and one
 * outside it), against a real server with security on; each call's status must be what the
 * route's role and namespace rules say. The route list comes from the server itself
 * (`routeRoles`): a route without an entry in `ROUTES` below fails the test, and so does an entry
 * whose role differs from the one the route declares.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { buildServer } from '../src/api/server.ts';
import { roleAllows, type Role, type RouteRole, type RouteRoleEntry } from '../src/api/roles.ts';
import { consoleAssetPaths } from '../src/api/routes/console.ts';
import { loadConfig } from '../src/config/load-config.ts';
import { NodeService } from '../src/node/node-service.ts';
import { call, ndjson, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

/** Which side of the namespace boundary a call addresses. */
type Side = 'inside' | 'outside';

/**
 * How a key limited to namespaces is treated: `namespace` routes address one namespace (403
 * outside it), `global` routes list or search across them (allowed, filtered), `unrestricted`
 * routes reach every namespace at once (403 for a limited key).
 */
type Scoping = 'namespace' | 'global' | 'unrestricted';

interface Sample {
  role: RouteRole;
  scoping: Scoping;
  /** The request for a side; may create what it acts on first (with the admin key). */
  request(side: Side): Promise<{ path: string } & CallOptions>;
}

const NAMESPACE: Record<Side, string> = { inside: 'team-a', outside: 'team-b' };
const DOCS: Record<Side, string> = { inside: 'a-docs', outside: 'b-docs' };
/** A namespace inside the limited key's scope that namespace-deleting calls may consume. */
const SCRATCH_NAMESPACE = 'scratch-a';

let server: TroveServer;
let adminKey: string;
const keys: Record<string, string> = {};
let counter = 0;

function unique(prefix: string): string {
  counter++;
  return `${prefix}-${counter}`;
}

async function admin(method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  const response = await call(server, method, path, { ...options, apiKey: adminKey });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
  return response;
}

/** A fresh collection of the side's namespace. */
async function freshCollection(side: Side): Promise<string> {
  const name = unique(`${side}-tmp`);
  await admin('PUT', `/${name}`, { json: { namespace: NAMESPACE[side] } });
  return name;
}

/** A fresh trash item of the side's namespace. */
async function freshTrashItem(side: Side): Promise<string> {
  const name = await freshCollection(side);
  const deleted = await admin('DELETE', `/${name}`);
  return deleted.body.trash_items[0].item_id as string;
}

/** A fresh compaction job of the side's namespace. */
async function freshJob(side: Side): Promise<string> {
  const compacted = await admin('POST', `/${DOCS[side]}/_compact`);
  return compacted.body.nodes[0].job_id as string;
}

const json = (body: unknown) => ({ json: body });
const docs = (side: Side) => DOCS[side];

/** Every route: the role it requires, how namespaces apply, and a request for each side. */
const ROUTES: Record<string, Sample> = {
  'GET /': { role: 'authenticated', scoping: 'global', request: async () => ({ path: '/' }) },
  'HEAD /': { role: 'authenticated', scoping: 'global', request: async () => ({ path: '/' }) },
  'GET /_security/_authenticate': { role: 'authenticated', scoping: 'global', request: async () => ({ path: '/_security/_authenticate' }) },
  'POST /_security/api_key': {
    role: 'admin',
    scoping: 'namespace',
    request: async (side) => ({ path: '/_security/api_key', ...json({ name: unique('matrix'), role: 'read', namespaces: [NAMESPACE[side]] }) }),
  },
  'PUT /_security/api_key': {
    role: 'admin',
    scoping: 'namespace',
    request: async (side) => ({ path: '/_security/api_key', ...json({ name: unique('matrix'), role: 'read', namespaces: [NAMESPACE[side]] }) }),
  },
  'GET /_security/api_key': { role: 'admin', scoping: 'global', request: async () => ({ path: '/_security/api_key' }) },
  'DELETE /_security/api_key/:id': {
    role: 'admin',
    scoping: 'namespace',
    request: async (side) => {
      const created = await admin('POST', '/_security/api_key', json({ name: unique('doomed'), role: 'read', namespaces: [NAMESPACE[side]] }));
      return { path: `/_security/api_key/${created.body.id}` };
    },
  },

  'GET /_cat/collections': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cat/collections' }) },
  'GET /_cat/collections/:target': { role: 'monitor', scoping: 'global', request: async (side) => ({ path: `/_cat/collections/${docs(side)}` }) },
  'GET /_cat/indices': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cat/indices' }) },
  'GET /_cat/indices/:target': { role: 'monitor', scoping: 'global', request: async (side) => ({ path: `/_cat/indices/${docs(side)}` }) },
  'GET /_cat/segments': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cat/segments' }) },
  'GET /_cat/segments/:target': { role: 'monitor', scoping: 'global', request: async (side) => ({ path: `/_cat/segments/${docs(side)}` }) },
  'GET /_cluster/health': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cluster/health?level=collections' }) },
  'GET /_cluster/health/:collection': { role: 'monitor', scoping: 'namespace', request: async (side) => ({ path: `/_cluster/health/${docs(side)}` }) },
  'GET /_cat/aliases': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cat/aliases' }) },
  'GET /_cat/aliases/:name': { role: 'monitor', scoping: 'global', request: async (side) => ({ path: `/_cat/aliases/${await freshAlias(side)}` }) },
  'GET /_cluster/state': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cluster/state' }) },
  'GET /_cluster/state/:sections': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cluster/state/namespaces,collections' }) },
  'GET /_node/:node_id': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_node/_local' }) },
  'GET /_node/:node_id/stats': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_node/_local/stats' }) },
  'GET /_node/:node_id/settings': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_node/_local/settings' }) },
  'PUT /_node/:node_id/settings': {
    role: 'admin',
    scoping: 'unrestricted',
    request: async () => ({ path: '/_node/_local/settings', ...json({ 'search.default_timeout_ms': 0 }) }),
  },
  'GET /_metrics': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_metrics' }) },
  'GET /_cluster/settings': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cluster/settings' }) },
  'PUT /_cluster/settings': { role: 'admin', scoping: 'unrestricted', request: async () => ({ path: '/_cluster/settings', ...json({ transient: { 'search.default_timeout_ms': null } }) }) },
  'GET /_jobs': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_jobs' }) },
  'GET /_jobs/:job_id': { role: 'monitor', scoping: 'namespace', request: async (side) => ({ path: `/_jobs/${await freshJob(side)}` }) },
  'POST /:collection/_compact': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_compact` }) },
  'GET /_stats': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_stats' }) },
  'GET /:collection/_stats': { role: 'monitor', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_stats` }) },
  'GET /_stats/:metric': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_stats/docs,store' }) },
  'GET /:collection/_stats/:metric': { role: 'monitor', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_stats/docs` }) },
  'POST /_flush': { role: 'write', scoping: 'global', request: async () => ({ path: '/_flush' }) },
  'POST /:collection/_flush': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_flush` }) },
  'GET /_flush': { role: 'write', scoping: 'global', request: async () => ({ path: '/_flush' }) },
  'GET /:collection/_flush': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_flush` }) },
  'GET /:collection/_recovery': { role: 'monitor', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_recovery` }) },
  'GET /_settings': { role: 'read', scoping: 'global', request: async () => ({ path: '/_settings' }) },
  'GET /:collection/_settings': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_settings` }) },
  'PUT /:collection/_settings': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_settings`, ...json({ index: { refresh_interval: '1s' } }) }) },
  'GET /_settings/:name': { role: 'read', scoping: 'global', request: async () => ({ path: '/_settings/index.number_of_shards' }) },
  'GET /:collection/_settings/:name': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_settings/index.number_of_*` }) },
  'PUT /_settings': { role: 'manage', scoping: 'global', request: async () => ({ path: '/_settings', ...json({ index: { refresh_interval: '1s' } }) }) },
  'GET /_field_caps': { role: 'read', scoping: 'global', request: async () => ({ path: '/_field_caps?fields=*' }) },
  'POST /_field_caps': { role: 'read', scoping: 'global', request: async () => ({ path: '/_field_caps', ...json({ fields: ['*'] }) }) },
  'GET /:collection/_field_caps': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_field_caps?fields=*` }) },
  'POST /:collection/_field_caps': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_field_caps`, ...json({ fields: 'title' }) }) },
  'POST /:collection/_forcemerge': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_forcemerge?wait_for_completion=false` }) },

  'GET /_search': { role: 'read', scoping: 'global', request: async () => ({ path: '/_search' }) },
  'POST /_search': { role: 'read', scoping: 'global', request: async () => ({ path: '/_search', ...json({ query: { match_all: {} } }) }) },
  'GET /:collection/_search': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_search` }) },
  'POST /:collection/_search': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_search`, ...json({}) }) },
  'GET /_validate/query': { role: 'read', scoping: 'global', request: async () => ({ path: '/_validate/query?q=title:x' }) },
  'POST /_validate/query': { role: 'read', scoping: 'global', request: async () => ({ path: '/_validate/query', ...json({ query: { match_all: {} } }) }) },
  'GET /:collection/_validate/query': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_validate/query?q=title:x` }) },
  'POST /:collection/_validate/query': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_validate/query`, ...json({ query: { match_all: {} } }) }) },
  'GET /:collection/_explain/:id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_explain/1?q=title:x` }) },
  'POST /:collection/_explain/:id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_explain/1`, ...json({ query: { match_all: {} } }) }) },
  'GET /_analyze': { role: 'read', scoping: 'global', request: async () => ({ path: '/_analyze', ...json({ text: 'a b' }) }) },
  'POST /_analyze': { role: 'read', scoping: 'global', request: async () => ({ path: '/_analyze', ...json({ text: 'a b' }) }) },
  'GET /:collection/_analyze': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_analyze`, ...json({ field: 'title', text: 'a b' }) }) },
  'POST /:collection/_analyze': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_analyze`, ...json({ field: 'title', text: 'a b' }) }) },
  'GET /_msearch': { role: 'read', scoping: 'global', request: async (side) => msearchRequest('/_msearch', side) },
  'POST /_msearch': { role: 'read', scoping: 'global', request: async (side) => msearchRequest('/_msearch', side) },
  'GET /:collection/_msearch': { role: 'read', scoping: 'namespace', request: async (side) => msearchRequest(`/${docs(side)}/_msearch`, side) },
  'POST /:collection/_msearch': { role: 'read', scoping: 'namespace', request: async (side) => msearchRequest(`/${docs(side)}/_msearch`, side) },
  'GET /_search/scroll': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/_search/scroll?scroll_id=${await freshScroll(side)}` }) },
  'POST /_search/scroll': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: '/_search/scroll', ...json({ scroll_id: await freshScroll(side) }) }) },
  'GET /_search/scroll/:scroll_id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/_search/scroll/${await freshScroll(side)}` }) },
  'POST /_search/scroll/:scroll_id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/_search/scroll/${await freshScroll(side)}` }) },
  'DELETE /_search/scroll': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: '/_search/scroll', ...json({ scroll_id: await freshScroll(side) }) }) },
  'DELETE /_search/scroll/:scroll_id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/_search/scroll/${await freshScroll(side)}` }) },
  'POST /:collection/_search/point_in_time': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_search/point_in_time?keep_alive=10s` }) },
  'POST /:collection/_pit': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_pit?keep_alive=10s` }) },
  'DELETE /_search/point_in_time': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: '/_search/point_in_time', ...json({ pit_id: [await freshPointInTime(side)] }) }) },
  'DELETE /_pit': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: '/_pit', ...json({ id: await freshPointInTime(side) }) }) },
  'GET /_search/point_in_time/_all': { role: 'read', scoping: 'unrestricted', request: async () => ({ path: '/_search/point_in_time/_all' }) },
  'DELETE /_search/point_in_time/_all': { role: 'read', scoping: 'unrestricted', request: async () => ({ path: '/_search/point_in_time/_all' }) },
  'GET /_count': { role: 'read', scoping: 'global', request: async () => ({ path: '/_count' }) },
  'POST /_count': { role: 'read', scoping: 'global', request: async () => ({ path: '/_count', ...json({}) }) },
  'GET /:collection/_count': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_count` }) },
  'POST /:collection/_count': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_count`, ...json({}) }) },

  'POST /_bulk': { role: 'write', scoping: 'namespace', request: async (side) => bulkRequest('/_bulk', side, true) },
  'PUT /_bulk': { role: 'write', scoping: 'namespace', request: async (side) => bulkRequest('/_bulk', side, true) },
  'POST /:collection/_bulk': { role: 'write', scoping: 'namespace', request: async (side) => bulkRequest(`/${docs(side)}/_bulk`, side, false) },
  'PUT /:collection/_bulk': { role: 'write', scoping: 'namespace', request: async (side) => bulkRequest(`/${docs(side)}/_bulk`, side, false) },
  'PUT /:collection/_doc/:id': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_doc/2`, ...json({ title: 'two' }) }) },
  'POST /:collection/_doc/:id': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_doc/2`, ...json({ title: 'two' }) }) },
  'POST /:collection/_doc': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_doc`, ...json({ title: 'auto' }) }) },
  'PUT /:collection/_create/:id': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_create/${unique('c')}`, ...json({ title: 'c' }) }) },
  'POST /:collection/_create/:id': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_create/${unique('c')}`, ...json({ title: 'c' }) }) },
  'GET /:collection/_doc/:id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_doc/1` }) },
  'HEAD /:collection/_doc/:id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_doc/1` }) },
  'GET /:collection/_source/:id': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_source/1` }) },
  'DELETE /:collection/_doc/:id': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_doc/${unique('gone')}` }) },
  'POST /:collection/_update/:id': {
    role: 'write',
    scoping: 'namespace',
    request: async (side) => ({ path: `/${docs(side)}/_update/1`, ...json({ doc: { title: 'one again' } }) }),
  },
  'POST /:collection/_delete_by_query': {
    role: 'write',
    scoping: 'namespace',
    request: async (side) => ({ path: `/${docs(side)}/_delete_by_query`, ...json({ query: { ids: { values: [unique('none')] } } }) }),
  },
  'POST /:collection/_update_by_query': {
    role: 'write',
    scoping: 'namespace',
    request: async (side) => ({ path: `/${docs(side)}/_update_by_query`, ...json({ query: { ids: { values: ['1'] } }, doc: { title: 'one again' } }) }),
  },
  'POST /_reindex': {
    role: 'write',
    scoping: 'namespace',
    request: async (side) => ({ path: '/_reindex', ...json({ source: { index: docs(side) }, dest: { index: await freshCollection(side) } }) }),
  },
  'GET /_mget': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: '/_mget', ...json({ docs: [{ _index: docs(side), _id: '1' }] }) }) },
  'POST /_mget': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: '/_mget', ...json({ docs: [{ _index: docs(side), _id: '1' }] }) }) },
  'GET /:collection/_mget': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_mget`, ...json({ ids: ['1'] }) }) },
  'POST /:collection/_mget': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_mget`, ...json({ ids: ['1'] }) }) },
  'GET /:collection/_changes': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_changes?feed=normal` }) },
  'POST /:collection/_changes': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_changes?feed=normal`, ...json({}) }) },

  'PUT /_namespace/:name': {
    role: 'manage',
    scoping: 'namespace',
    request: async (side) => ({ path: `/_namespace/${side === 'inside' ? NAMESPACE.inside : unique('team-b-new')}` }),
  },
  'GET /_namespace': { role: 'read', scoping: 'global', request: async () => ({ path: '/_namespace' }) },
  'GET /_namespace/:name': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/_namespace/${NAMESPACE[side]}` }) },
  'DELETE /_namespace/:name': {
    role: 'manage',
    scoping: 'namespace',
    request: async (side) => {
      if (side === 'outside') return { path: `/_namespace/${NAMESPACE.outside}` };
      await call(server, 'PUT', `/_namespace/${SCRATCH_NAMESPACE}`, { apiKey: adminKey });
      return { path: `/_namespace/${SCRATCH_NAMESPACE}` };
    },
  },
  'GET /_cluster/trash': { role: 'monitor', scoping: 'global', request: async () => ({ path: '/_cluster/trash' }) },
  'POST /_cluster/trash/:item_id/_verify': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/_cluster/trash/${await freshTrashItem(side)}/_verify` }) },
  'POST /_cluster/trash/:item_id/_restore': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/_cluster/trash/${await freshTrashItem(side)}/_restore` }) },
  'DELETE /_cluster/trash/:item_id': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/_cluster/trash/${await freshTrashItem(side)}` }) },
  'DELETE /_cluster/trash': { role: 'admin', scoping: 'unrestricted', request: async () => ({ path: '/_cluster/trash' }) },
  'POST /_internal/shards/:uuid/:method': { role: 'admin', scoping: 'unrestricted', request: async () => ({ path: '/_internal/shards/no-such-shard/stats', json: { args: [] } }) },
  'POST /_internal/shards/_batch': { role: 'admin', scoping: 'unrestricted', request: async () => ({ path: '/_internal/shards/_batch', json: { args: [[]] } }) },
  'POST /_internal/node/:method': { role: 'admin', scoping: 'unrestricted', request: async () => ({ path: '/_internal/node/node.settings', json: { args: [] } }) },
  'GET /_internal/recovery/files/:uuid/:hold': { role: 'admin', scoping: 'unrestricted', request: async () => ({ path: '/_internal/recovery/files/no-such-shard/1?path=manifest.json' }) },

  'PUT /:collection': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${unique(`${side}-new`)}`, ...json({ namespace: NAMESPACE[side] }) }) },
  'GET /:collection': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}` }) },
  'HEAD /:collection': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}` }) },
  'DELETE /:collection': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${await freshCollection(side)}` }) },
  ...aliasRoutes(),
  'GET /_mapping': { role: 'read', scoping: 'global', request: async () => ({ path: '/_mapping' }) },
  'GET /:collection/_mapping': { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_mapping` }) },
  'PUT /:collection/_mapping': {
    role: 'manage',
    scoping: 'namespace',
    request: async (side) => ({ path: `/${docs(side)}/_mapping`, ...json({ properties: { tag: { type: 'keyword' } } }) }),
  },
  'POST /:collection/_mapping': {
    role: 'manage',
    scoping: 'namespace',
    request: async (side) => ({ path: `/${docs(side)}/_mapping`, ...json({ properties: { tag: { type: 'keyword' } } }) }),
  },
  // The console's static files: served to anyone, key or not (src/api/routes/console.ts).
  ...Object.fromEntries(consoleAssetPaths().map((path): [string, Sample] => [`GET ${path}`, { role: 'public', scoping: 'global', request: async () => ({ path }) }])),
  'GET /_refresh': { role: 'write', scoping: 'global', request: async () => ({ path: '/_refresh' }) },
  'POST /_refresh': { role: 'write', scoping: 'global', request: async () => ({ path: '/_refresh' }) },
  'GET /:collection/_refresh': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_refresh` }) },
  'POST /:collection/_refresh': { role: 'write', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_refresh` }) },
};

/** A fresh scroll over the side's collection (opened with the admin key). */
async function freshScroll(side: Side): Promise<string> {
  return (await admin('POST', `/${docs(side)}/_search?scroll=10s`, json({ size: 1 }))).body._scroll_id as string;
}

/** A fresh point in time on the side's collection (opened with the admin key). */
async function freshPointInTime(side: Side): Promise<string> {
  return (await admin('POST', `/${docs(side)}/_pit?keep_alive=10s`)).body.id as string;
}

/** A fresh alias of the side's collection. */
async function freshAlias(side: Side): Promise<string> {
  const name = unique(`${side}-alias`);
  await admin('PUT', `/${docs(side)}/_alias/${name}`);
  return name;
}

/** The alias routes: changes need `manage` on the collection's namespace; listings filter what a limited key sees. */
function aliasRoutes(): Record<string, Sample> {
  const routes: Record<string, Sample> = {
    'POST /_aliases': { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: '/_aliases', ...json({ actions: [{ add: { index: docs(side), alias: unique(`${side}-alias`) } }] }) }) },
  };
  for (const segment of ['_alias', '_aliases']) {
    for (const method of ['PUT', 'POST']) {
      routes[`${method} /:collection/${segment}/:name`] = { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/${segment}/${unique(`${side}-alias`)}` }) };
    }
    for (const method of ['PUT', 'POST']) {
      routes[`${method} /:collection/${segment}`] = { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/${segment}`, ...json({ alias: unique(`${side}-alias`) }) }) };
    }
    routes[`DELETE /:collection/${segment}/:name`] = { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/${segment}/${await freshAlias(side)}` }) };
  }
  for (const method of ['PUT', 'POST']) {
    routes[`${method} /_alias/:name`] = { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: `/_alias/${unique(`${side}-alias`)}`, ...json({ index: docs(side) }) }) };
    routes[`${method} /_alias`] = { role: 'manage', scoping: 'namespace', request: async (side) => ({ path: '/_alias', ...json({ index: docs(side), alias: unique(`${side}-alias`) }) }) };
  }
  for (const method of ['GET', 'HEAD']) {
    routes[`${method} /_alias`] = { role: 'read', scoping: 'global', request: async () => ({ path: '/_alias' }) };
    routes[`${method} /_alias/:name`] = { role: 'read', scoping: 'global', request: async (side) => ({ path: `/_alias/${await freshAlias(side)}` }) };
    routes[`${method} /:collection/_alias`] = { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_alias` }) };
    routes[`${method} /:collection/_alias/:name`] = { role: 'read', scoping: 'namespace', request: async (side) => ({ path: `/${docs(side)}/_alias/${await freshAlias(side)}` }) };
  }
  return routes;
}

/** An `_msearch` body with one search of the side's collection (a namespace-limited key outside it gets a 403 item, not a 403 request). */
function msearchRequest(path: string, side: Side): { path: string } & CallOptions {
  return { path, body: ndjson([{ index: docs(side) }, { query: { match_all: {} } }]), headers: { 'content-type': 'application/x-ndjson' } };
}

/** A `_bulk` body writing one document of the side's collection (named per item or by the URL). */
function bulkRequest(path: string, side: Side, named: boolean): { path: string } & CallOptions {
  const action = named ? { index: { _index: docs(side), _id: '3' } } : { index: { _id: '3' } };
  return { path, body: ndjson([action, { title: 'three' }]), headers: { 'content-type': 'application/x-ndjson' } };
}

/** The routes a server registers, read from an in-process server on a scratch data path. */
async function registeredRoutes(): Promise<readonly RouteRoleEntry[]> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-routes-'));
  const logger = pino({ level: 'silent' });
  const config = loadConfig({ flags: { 'path.data': dataPath, 'security.enabled': 'false' }, env: {} });
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

before(async () => {
  server = await startServer({ security: true });
  adminKey = await server.bootstrapKey();
  keys.expired = (await admin('POST', '/_security/api_key', json({ name: 'expired', role: 'admin', expires_in_secs: 1 }))).body.api_key;
  const expiresAt = Date.now() + 1000;
  for (const side of ['inside', 'outside'] as const) {
    await admin('PUT', `/_namespace/${NAMESPACE[side]}`);
    await admin('PUT', `/${DOCS[side]}`, json({ namespace: NAMESPACE[side], mappings: { properties: { title: { type: 'text' } } } }));
    await admin('PUT', `/${DOCS[side]}/_doc/1`, json({ title: 'one' }));
  }
  for (const role of ['monitor', 'read', 'write', 'manage', 'admin'] as const) {
    keys[role] = (await admin('POST', '/_security/api_key', json({ name: `matrix-${role}`, role }))).body.api_key;
  }
  keys.scoped = (await admin('POST', '/_security/api_key', json({ name: 'tenant-admin', role: 'admin', namespaces: [NAMESPACE.inside, SCRATCH_NAMESPACE] })))
    .body.api_key;
  keys.wrong = `trove_${'0'.repeat(16)}_${'A'.repeat(43)}`;
  await sleep(Math.max(0, expiresAt - Date.now() + 50));
});

after(async () => {
  await server?.cleanup();
});

test('every registered route has an entry here, with the role it declares', async () => {
  const registered = await registeredRoutes();
  const seen = new Set<string>();
  for (const route of registered) {
    const name = `${route.method} ${route.url}`;
    seen.add(name);
    const sample = ROUTES[name];
    assert.ok(sample, `route [${name}] (role ${route.role}) has no entry in the security matrix: add one to ROUTES`);
    assert.equal(route.role, sample.role, `route [${name}] requires [${route.role}], the matrix expects [${sample.role}]`);
  }
  for (const name of Object.keys(ROUTES)) assert.ok(seen.has(name), `the matrix lists [${name}], which is not registered`);
});

/** The security error type of a response, or null when the response is not a security refusal. */
function securityRefusal(response: HttpResponse): string | null {
  if (response.status !== 401 && response.status !== 403) return null;
  return typeof response.body === 'object' && response.body?.error?.type === 'security_exception' ? 'security_exception' : 'other';
}

test('every route answers each caller as its role and namespace rules say', async () => {
  const failures: string[] = [];
  const check = async (name: string, caller: string, side: Side, expected: 401 | 403 | 'allowed') => {
    const [method] = name.split(' ');
    const { path, ...options } = await ROUTES[name].request(side);
    const key = keys[caller];
    const response = await call(server, method, path, { ...options, ...(key === undefined ? {} : { apiKey: key }) });
    const refusal = method === 'HEAD' ? (response.status === 401 || response.status === 403 ? 'head' : null) : securityRefusal(response);
    const ok =
      expected === 'allowed'
        ? refusal === null && response.status < 500
        : response.status === expected && refusal !== null && (expected === 403 || /^Bearer realm=/.test(String(response.headers['www-authenticate'])));
    if (!ok) failures.push(`${name} [${path}] as ${caller} (${side}): expected ${expected}, got ${response.status} ${response.text.slice(0, 200)}`);
  };

  for (const name of Object.keys(ROUTES)) {
    const sample = ROUTES[name];
    const stranger = sample.role === 'public' ? 'allowed' : 401;
    await check(name, 'none', 'inside', stranger);
    await check(name, 'wrong', 'inside', stranger);
    await check(name, 'expired', 'inside', stranger);
    for (const role of ['monitor', 'read', 'write', 'manage', 'admin'] as const satisfies readonly Role[]) {
      await check(name, role, 'inside', roleAllows(role, sample.role) ? 'allowed' : 403);
    }
    await check(name, 'scoped', 'inside', sample.scoping === 'unrestricted' ? 403 : 'allowed');
    await check(name, 'scoped', 'outside', sample.scoping === 'global' ? 'allowed' : 403);
  }
  assert.deepEqual(failures, []);
});
