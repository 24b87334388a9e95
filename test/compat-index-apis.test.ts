/**
 * Index APIs as Elasticsearch/OpenSearch clients call them: `_field_caps` (merged across
 * collections, patterns, include_unmapped, index_filter, aliases, namespace-limited keys),
 * `GET _settings/{names}` (patterns, flat_settings, include_defaults), `refresh_interval` kept and
 * shown, and the index settings kept with no effect or enforced (`analyze.max_token_count`).
 * Through real HTTP, with security on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

let server: TroveServer;
let adminKey: string;

function admin(method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  return call(server, method, path, { ...options, apiKey: adminKey });
}

async function create(name: string, body: unknown): Promise<void> {
  const created = await admin('PUT', `/${name}`, { json: body });
  assert.equal(created.status, 200, created.text);
}

before(async () => {
  server = await startServer({ security: true });
  adminKey = await server.bootstrapKey();
  await create('fc1', {
    mappings: {
      properties: {
        text: { type: 'text' },
        keyword: { type: 'keyword' },
        number: { type: 'double' },
        misc: { type: 'text' },
        latency: { type: 'long', meta: { unit: 'ms', metric_type: 'gauge' } },
        object: { properties: { nested1: { type: 'text', index: false }, nested2: { type: 'float', doc_values: false } } },
      },
    },
  });
  await create('fc2', {
    mappings: {
      properties: {
        text: { type: 'text' },
        keyword: { type: 'keyword' },
        number: { type: 'double' },
        date: { type: 'date' },
        latency: { type: 'long', meta: { unit: 'ns', metric_type: 'gauge' } },
        object: { properties: { nested1: { type: 'text' }, nested2: { type: 'float' } } },
      },
    },
  });
  await create('fc3', {
    mappings: {
      properties: {
        text: { type: 'text', fields: { raw: { type: 'keyword' } } },
        keyword: { type: 'keyword' },
        number: { type: 'long' },
        date: { type: 'date' },
        object: { properties: { nested1: { type: 'long', index: false }, nested2: { type: 'keyword', doc_values: false } } },
      },
    },
  });
  assert.equal((await admin('PUT', '/fc3/_alias/fc-alias')).status, 200);
});

after(async () => {
  await server?.cleanup();
});

test('_field_caps merges types across collections and lists indices only where types differ', async () => {
  const caps = await admin('GET', '/fc1,fc2,fc3/_field_caps?fields=text,keyword,number,date');
  assert.equal(caps.status, 200, caps.text);
  assert.deepEqual(caps.body.indices, ['fc1', 'fc2', 'fc3']);
  assert.deepEqual(caps.body.fields.text, { text: { type: 'text', searchable: true, aggregatable: false } });
  assert.deepEqual(caps.body.fields.keyword, { keyword: { type: 'keyword', searchable: true, aggregatable: true } });
  assert.deepEqual(caps.body.fields.number, {
    double: { type: 'double', searchable: true, aggregatable: true, indices: ['fc1', 'fc2'] },
    long: { type: 'long', searchable: true, aggregatable: true, indices: ['fc3'] },
  });
  assert.deepEqual(caps.body.fields.date, { date: { type: 'date', searchable: true, aggregatable: true } });
  assert.deepEqual(Object.keys(caps.body.fields).sort(), ['date', 'keyword', 'number', 'text']);
});

test('_field_caps patterns reach objects, leaves, multi-fields and metadata fields; disagreements name the collections', async () => {
  const caps = await admin('POST', '/fc1,fc2,fc3/_field_caps', { json: { fields: ['object*'] } });
  assert.equal(caps.status, 200, caps.text);
  assert.deepEqual(caps.body.fields.object, { object: { type: 'object', searchable: false, aggregatable: false } });
  assert.deepEqual(caps.body.fields['object.nested1'], {
    long: { type: 'long', searchable: false, aggregatable: true, indices: ['fc3'] },
    text: { type: 'text', searchable: false, aggregatable: false, indices: ['fc1', 'fc2'], non_searchable_indices: ['fc1'] },
  });
  assert.deepEqual(caps.body.fields['object.nested2'], {
    float: { type: 'float', searchable: true, aggregatable: false, indices: ['fc1', 'fc2'], non_aggregatable_indices: ['fc1'] },
    keyword: { type: 'keyword', searchable: true, aggregatable: false, indices: ['fc3'] },
  });
  const multi = await admin('GET', '/fc3/_field_caps?fields=text*');
  assert.deepEqual(multi.body.fields['text.raw'], { keyword: { type: 'keyword', searchable: true, aggregatable: true } });
  const all = await admin('GET', '/fc1/_field_caps?fields=*');
  assert.deepEqual(all.body.fields._id, { _id: { type: '_id', searchable: true, aggregatable: true } });
  assert.deepEqual(all.body.fields._source, { _source: { type: '_source', searchable: false, aggregatable: false } });
  assert.ok(all.body.fields._index && all.body.fields._ignored && all.body.fields.misc);
  const prefix = await admin('GET', '/_field_caps?fields=n*');
  assert.deepEqual(Object.keys(prefix.body.fields), ['number']);
});

test('_field_caps: include_unmapped, meta merged, unknown fields left out, aliases and errors', async () => {
  const unmapped = await admin('GET', '/fc1,fc2,fc3/_field_caps?fields=text,misc,no_such_field&include_unmapped=true');
  assert.deepEqual(unmapped.body.fields.text, { text: { type: 'text', searchable: true, aggregatable: false } });
  assert.deepEqual(unmapped.body.fields.misc, {
    text: { type: 'text', searchable: true, aggregatable: false, indices: ['fc1'] },
    unmapped: { type: 'unmapped', searchable: false, aggregatable: false, indices: ['fc2', 'fc3'] },
  });
  assert.equal(unmapped.body.fields.no_such_field, undefined);
  const meta = await admin('GET', '/fc1,fc2,fc3/_field_caps?fields=latency');
  assert.deepEqual(meta.body.fields.latency.long.meta, { metric_type: ['gauge'], unit: ['ms', 'ns'] });
  assert.deepEqual((await admin('GET', '/fc3/_field_caps?fields=latency')).body.fields, {});
  const alias = await admin('GET', '/fc-alias/_field_caps?fields=number');
  assert.deepEqual(alias.body, { indices: ['fc3'], fields: { number: { long: { type: 'long', searchable: true, aggregatable: true } } } });
  const pattern = await admin('GET', '/fc*/_field_caps?fields=date');
  assert.deepEqual(pattern.body.indices, ['fc1', 'fc2', 'fc3']);
  const none = await admin('GET', '/fc1/_field_caps');
  assert.equal(none.status, 400);
  assert.equal(none.body.error.type, 'action_request_validation_exception');
  const missing = await admin('GET', '/nope/_field_caps?fields=*');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.type, 'index_not_found_exception');
  assert.deepEqual((await admin('GET', '/nope,fc1/_field_caps?fields=text&ignore_unavailable=true')).body.indices, ['fc1']);
});

test('_field_caps index_filter keeps the collections holding a matching document', async () => {
  await create('ff-1', { mappings: { properties: { timestamp: { type: 'date' }, field1: { type: 'keyword' } } } });
  await create('ff-2', { mappings: { properties: { timestamp: { type: 'date' }, field1: { type: 'long' } } } });
  for (const [index, timestamp, field1] of [['ff-1', '2015-01-02', '404'], ['ff-2', '2019-10-04', '403']]) {
    const written = await admin('POST', `/${index}/_doc?refresh=true`, { json: { timestamp, field1 } });
    assert.equal(written.status, 201, written.text);
  }
  const recent = await admin('POST', '/ff-*/_field_caps?fields=field1', { json: { index_filter: { range: { timestamp: { gte: '2019-01-01' } } } } });
  assert.equal(recent.status, 200, recent.text);
  assert.deepEqual(recent.body, { indices: ['ff-2'], fields: { field1: { long: { type: 'long', searchable: true, aggregatable: true } } } });
  // A collection created by its first document has the dynamic mapping's text field and keyword sub-field.
  assert.equal((await admin('POST', '/ff-3/_doc?refresh=true', { json: { timestamp: '2022-01-01', field1: '500' } })).status, 201);
  const dynamic = await admin('GET', '/ff-*/_field_caps?fields=field1*');
  assert.deepEqual(dynamic.body.indices, ['ff-1', 'ff-2', 'ff-3']);
  assert.deepEqual(Object.keys(dynamic.body.fields.field1), ['keyword', 'long', 'text']);
  assert.deepEqual(dynamic.body.fields.field1.text, { type: 'text', searchable: true, aggregatable: false, indices: ['ff-3'] });
  assert.deepEqual(dynamic.body.fields['field1.keyword'], { keyword: { type: 'keyword', searchable: true, aggregatable: true } });
  const later = await admin('POST', '/ff-*/_field_caps?fields=field1', { json: { index_filter: { range: { timestamp: { gte: '2019-01-01' } } } } });
  assert.deepEqual(later.body.indices, ['ff-2', 'ff-3']);
  const nothing = await admin('POST', '/ff-*/_field_caps?fields=*', { json: { index_filter: { match_none: {} } } });
  assert.deepEqual(nothing.body, { indices: [], fields: {} });
  const bad = await admin('POST', '/ff-*/_field_caps?fields=*', { json: { runtime_mappings: {} } });
  assert.equal(bad.status, 400);
});

test('_field_caps with a key limited to a namespace sees only its collections', async () => {
  assert.equal((await admin('PUT', '/_namespace/team-a')).status, 200);
  await create('a-docs', { namespace: 'team-a', mappings: { properties: { secret_a: { type: 'keyword' } } } });
  const key = await admin('POST', '/_security/api_key', { json: { name: 'caps-reader', role: 'read', namespaces: ['team-a'] } });
  assert.equal(key.status, 200, key.text);
  const limited = (path: string) => call(server, 'GET', path, { apiKey: key.body.api_key });
  const everything = await limited('/_field_caps?fields=*');
  assert.equal(everything.status, 200, everything.text);
  assert.deepEqual(everything.body.indices, ['a-docs']);
  assert.ok(everything.body.fields.secret_a);
  assert.equal(everything.body.fields.text, undefined);
  assert.deepEqual((await limited('/fc*,a-*/_field_caps?fields=*')).body.indices, ['a-docs']);
  assert.equal((await limited('/fc1/_field_caps?fields=*')).status, 403);
});

test('GET _settings/{names}: names, patterns, _all, flat_settings and include_defaults', async () => {
  await create('st1', { settings: { number_of_shards: 3, number_of_replicas: 0, index: { refresh_interval: -1 } } });
  const one = await admin('GET', '/st1/_settings/index.number_of_shards');
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(one.body, { st1: { settings: { index: { number_of_shards: '3' } } } });
  const two = await admin('GET', '/st1/_settings/index.number_of_shards,index.number_of_replicas');
  assert.deepEqual(two.body.st1.settings.index, { number_of_shards: '3', number_of_replicas: '0' });
  const pattern = await admin('GET', '/st1/_settings/index.number_of_s*');
  assert.deepEqual(pattern.body.st1.settings.index, { number_of_shards: '3' });
  for (const name of ['_all', '*']) {
    const all = await admin('GET', `/st1/_settings/${name}`);
    assert.equal(all.body.st1.settings.index.number_of_replicas, '0');
    assert.equal(all.body.st1.settings.index.refresh_interval, '-1');
  }
  for (const path of ['/_settings/index.number_of_shards', '/_all/_settings/index.number_of_shards', '/st*/_settings/index.number_of_shards']) {
    const across = await admin('GET', path);
    assert.equal(across.status, 200, across.text);
    assert.deepEqual(across.body.st1, { settings: { index: { number_of_shards: '3' } } }, path);
  }
  const flat = await admin('GET', '/st1/_settings?flat_settings=true');
  assert.equal(flat.body.st1.settings['index.number_of_shards'], '3');
  assert.equal(flat.body.st1.settings['index.refresh_interval'], '-1');
  assert.equal(flat.body.st1.settings['index.number_of_routing_shards'], undefined);
  const defaults = await admin('GET', '/st1/_settings?include_defaults=true&flat_settings=true');
  assert.equal(defaults.body.st1.defaults['index.max_result_window'], '10000');
  assert.equal(defaults.body.st1.defaults['index.max_slices_per_scroll'], '1024');
  assert.equal(defaults.body.st1.defaults['index.analyze.max_token_count'], '10000');
  assert.equal(defaults.body.st1.defaults['index.number_of_routing_shards'], '3');
  assert.equal(defaults.body.st1.defaults['index.refresh_interval'], undefined);
  const nested = await admin('GET', '/st1/_settings/index.analyze.*?include_defaults=true');
  assert.deepEqual(nested.body.st1, { settings: {}, defaults: { index: { analyze: { max_token_count: '10000' } } } });
  const viaAlias = await admin('GET', '/fc-alias/_settings/index.number_of_shards');
  assert.deepEqual(Object.keys(viaAlias.body), ['fc3']);
});

test('refresh_interval is kept and shown; PUT _settings changes it on a target or every collection, null resets it', async () => {
  await create('ri-a', {});
  await create('ri-b', { settings: { index: { refresh_interval: '30s' } } });
  assert.equal((await admin('GET', '/ri-b/_settings')).body['ri-b'].settings.index.refresh_interval, '30s');
  assert.equal((await admin('GET', '/ri-a/_settings')).body['ri-a'].settings.index.refresh_interval, undefined);
  assert.equal((await admin('PUT', '/ri-a/_settings', { json: { refresh_interval: '1s' } })).status, 200);
  assert.equal((await admin('GET', '/ri-a/_settings')).body['ri-a'].settings.index.refresh_interval, '1s');
  const everywhere = await admin('PUT', '/_settings', { json: { index: { refresh_interval: '5s' } } });
  assert.equal(everywhere.status, 200, everywhere.text);
  const all = await admin('GET', '/_settings/index.refresh_interval');
  for (const name of ['ri-a', 'ri-b', 'fc1', 'st1']) assert.equal(all.body[name].settings.index.refresh_interval, '5s', name);
  assert.equal((await admin('PUT', '/ri-a/_settings', { json: { 'index.refresh_interval': null } })).status, 200);
  assert.equal((await admin('GET', '/ri-a/_settings')).body['ri-a'].settings.index.refresh_interval, undefined);
  const bad = await admin('PUT', '/ri-a/_settings', { json: { refresh_interval: 'soon' } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.reason, /failed to parse setting \[index\.refresh_interval\] with value \[soon\] as a time value/);
  assert.equal((await admin('PUT', '/ri-bad', { json: { settings: { refresh_interval: {} } } })).status, 400);
  assert.equal((await admin('HEAD', '/ri-bad')).status, 404);
});

test('max_slices_per_scroll, translog retention, concurrent segment search mode and soft_deletes are kept and shown', async () => {
  await create('ks', {
    settings: {
      index: {
        max_slices_per_scroll: 8,
        soft_deletes: { enabled: true },
        'translog.retention.size': '128mb',
        search: { concurrent_segment_search: { mode: 'all' } },
      },
    },
  });
  const shown = await admin('GET', '/ks/_settings');
  const index = shown.body.ks.settings.index;
  assert.equal(index.max_slices_per_scroll, '8');
  assert.deepEqual(index.soft_deletes, { enabled: 'true' });
  assert.deepEqual(index.translog, { retention: { size: '128mb' } });
  assert.deepEqual(index.search, { concurrent_segment_search: { mode: 'all' } });
  const changed = await admin('PUT', '/ks/_settings', {
    json: { 'index.max_slices_per_scroll': 16, 'index.translog.retention.age': '1h', 'index.translog.retention.size': null, 'index.search.concurrent_segment_search.mode': 'none' },
  });
  assert.equal(changed.status, 200, changed.text);
  const flat = (await admin('GET', '/ks/_settings?flat_settings=true')).body.ks.settings;
  assert.equal(flat['index.max_slices_per_scroll'], '16');
  assert.equal(flat['index.translog.retention.age'], '1h');
  assert.equal(flat['index.translog.retention.size'], undefined);
  assert.equal(flat['index.search.concurrent_segment_search.mode'], 'none');
  const refusals: Array<[string, unknown, RegExp]> = [
    ['PUT /ks/_settings', { 'index.soft_deletes.enabled': true }, /Can't update non dynamic settings \[\[index\.soft_deletes\.enabled\]\]/],
    ['PUT /ks/_settings', { 'index.max_slices_per_scroll': 0 }, /index\.max_slices_per_scroll/],
    ['PUT /ks/_settings', { 'index.search.concurrent_segment_search.mode': 'sometimes' }, /must be one of \[all, none, auto\]/],
    ['PUT /ks/_settings', { 'index.translog.retention.size': 'big' }, /as a size in bytes/],
    ['PUT /ks-off', { settings: { 'index.soft_deletes.enabled': false } }, /soft-deletes disabled is no longer supported/],
  ];
  for (const [request, body, reason] of refusals) {
    const [method, path] = request.split(' ') as [string, string];
    const refused = await admin(method, path, { json: body });
    assert.equal(refused.status, 400, `${request} ${refused.text}`);
    assert.match(refused.body.error.reason, reason);
  }
  assert.equal((await admin('GET', '/ks/_settings?flat_settings=true')).body.ks.settings['index.max_slices_per_scroll'], '16');
});

test('analyze.max_token_count limits the tokens of _analyze, on the collection and by default', async () => {
  await create('an', { settings: { index: { analyze: { max_token_count: 3 } } }, mappings: { properties: { body: { type: 'text' } } } });
  const within = await admin('POST', '/an/_analyze', { json: { field: 'body', text: 'one two three' } });
  assert.equal(within.status, 200, within.text);
  assert.equal(within.body.tokens.length, 3);
  const over = await admin('POST', '/an/_analyze', { json: { analyzer: 'standard', text: ['one two', 'three four'] } });
  assert.equal(over.status, 400, over.text);
  assert.equal(
    over.body.error.reason,
    'The number of tokens produced by calling _analyze has exceeded the allowed maximum of [3]. This limit can be set by changing the [index.analyze.max_token_count] index level setting.',
  );
  assert.equal((await admin('PUT', '/an/_settings', { json: { 'index.analyze.max_token_count': 4 } })).status, 200);
  assert.equal((await admin('POST', '/an/_analyze', { json: { analyzer: 'standard', text: ['one two', 'three four'] } })).status, 200);
  const many = Array.from({ length: 10_001 }, (_, n) => `w${n}`).join(' ');
  const global = await admin('POST', '/_analyze', { json: { analyzer: 'whitespace', text: many } });
  assert.equal(global.status, 400);
  assert.match(global.body.error.reason, /allowed maximum of \[10000\]/);
  assert.equal((await admin('POST', '/_analyze', { json: { analyzer: 'whitespace', text: many.slice(0, many.lastIndexOf(' ')) } })).status, 200);
  const missing = await admin('POST', '/nope/_analyze', { json: { analyzer: 'standard', text: 'a' } });
  assert.equal(missing.status, 404, missing.text);
  assert.equal(missing.body.error.type, 'index_not_found_exception');
});
