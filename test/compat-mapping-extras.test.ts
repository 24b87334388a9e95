/**
 * Mapping features beyond the basic field types, through real HTTP on a one-shard and a
 * three-shard collection holding the same documents: `binary` with and without doc values
 * (`exists`, `docvalue_fields`, still not searchable), `geo_point` (every accepted format,
 * several points per document, range checks, `exists`, `geo_bounding_box`, `geo_distance`, the
 * 400s of what is not supported), `ignore_malformed` (values skipped, `_ignored` searchable) and
 * `index_prefixes` / `index_phrases` (accepted, validated and kept); everything again after a
 * merge into segments and a restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    blob: { type: 'binary', doc_values: true },
    raw: { type: 'binary' },
    place: { type: 'geo_point' },
    spot: { type: 'geo_point', ignore_malformed: true },
    count: { type: 'integer', ignore_malformed: true },
    when: { type: 'date', ignore_malformed: true },
    addr: { type: 'ip', ignore_malformed: true },
    body: { type: 'text', index_prefixes: { min_chars: 1, max_chars: 10 }, index_phrases: true },
    notes: { type: 'match_only_text', index_prefixes: {} },
  },
};

// Reference places: Paris (48.8566, 2.3522), London (51.5074, -0.1278), New York (40.7128, -74.006),
// Fiji (-17.7134, 178.065) and Tonga-side of the antimeridian (-21.1789, -175.1982).
const DOCS: Record<string, Record<string, unknown>> = {
  paris: { place: { lat: 48.8566, lon: 2.3522 }, blob: 'aGVsbG8=', raw: 'd29ybGQ=', count: 1, body: 'quick brown fox' },
  london: { place: '51.5074,-0.1278', count: 'many', when: '2024-01-01', addr: 'not an ip', spot: [999, 999] },
  newyork: { place: [-74.006, 40.7128], when: 'yesterday', addr: '10.0.0.1' },
  fiji: { place: 'POINT (178.065 -17.7134)', spot: 'nowhere' },
  tonga: { place: '2h5rt22', count: 7, spot: { lat: -21.1789, lon: -175.1982 } },
  both: { place: [{ lat: 48.8566, lon: 2.3522 }, [-74.006, 40.7128]], raw: 'YWJj' },
  none: { body: 'nothing here' },
};

const COLLECTIONS = ['extras1', 'extras3'];

before(async () => {
  server = await startServer();
  for (const [name, shards] of [['extras1', 1], ['extras3', 3]] as const) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
    assert.equal(created.status, 200, created.text);
    const body = ndjson(Object.entries(DOCS).flatMap(([id, doc]) => [{ index: { _id: id } }, doc]));
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
});

after(async () => {
  await server?.cleanup();
});

/** Sorted ids matching a query, checked equal on one and three shards. */
async function ids(query: unknown): Promise<string[]> {
  const answers: string[][] = [];
  for (const name of COLLECTIONS) {
    const response = await call(server, 'POST', `/${name}/_search`, { json: { size: 20, query } });
    assert.equal(response.status, 200, `${name} ${JSON.stringify(query)}: ${response.text}`);
    answers.push(response.body.hits.hits.map((hit: any) => hit._id).sort());
  }
  assert.deepEqual(answers[1], answers[0], `three shards: ${JSON.stringify(query)}`);
  return answers[0]!;
}

async function searchError(body: Record<string, unknown>, collection = 'extras1'): Promise<{ status: number; type: string; reason: string }> {
  const response = await call(server, 'POST', `/${collection}/_search`, { json: body });
  return { status: response.status, type: response.body.error?.type, reason: response.body.error?.reason };
}

async function createError(mappings: unknown): Promise<{ status: number; type: string; reason: string }> {
  const response = await call(server, 'PUT', '/bad_mapping', { json: { mappings } });
  return { status: response.status, type: response.body.error?.type, reason: response.body.error?.reason };
}

test('binary with doc_values: exists, docvalue_fields give the base64 text, term stays a 400', async () => {
  assert.deepEqual(await ids({ exists: { field: 'blob' } }), ['paris']);
  const response = await call(server, 'POST', '/extras3/_search', { json: { query: { ids: { values: ['paris'] } }, docvalue_fields: ['blob'] } });
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(response.body.hits.hits[0].fields, { blob: ['aGVsbG8='] });
  const term = await searchError({ query: { term: { blob: 'aGVsbG8=' } } });
  assert.equal(term.status, 400);
  assert.match(term.reason, /Binary fields do not support searching/);
  const sort = await searchError({ sort: [{ blob: 'asc' }] });
  assert.equal(sort.status, 400);
  assert.match(sort.reason, /can't sort on binary field \[blob\]/);
  const grouped = await call(server, 'POST', '/extras3/_search', { json: { size: 0, aggs: { keys: { terms: { field: 'blob' } } } } });
  assert.deepEqual(grouped.body.aggregations.keys.buckets, [{ key: 'aGVsbG8=', doc_count: 1 }]);
});

test('binary without doc_values: exists matches the documents holding a value; docvalue_fields is a 400', async () => {
  assert.deepEqual(await ids({ exists: { field: 'raw' } }), ['both', 'paris']);
  const docValues = await searchError({ docvalue_fields: ['raw'] });
  assert.equal(docValues.status, 400);
  const bad = await call(server, 'PUT', '/extras1/_doc/badblob', { json: { raw: 'not base64!' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'mapper_parsing_exception');
});

test('geo_point: every accepted format indexes its point; exists and _source as sent', async () => {
  assert.deepEqual(await ids({ exists: { field: 'place' } }), ['both', 'fiji', 'london', 'newyork', 'paris', 'tonga']);
  const got = await call(server, 'GET', '/extras3/_doc/london');
  assert.equal(got.body._source.place, '51.5074,-0.1278');
  // Each format lands where its point is: a small box around each city.
  const near = (lat: number, lon: number) => ({ geo_bounding_box: { place: { top_left: { lat: lat + 0.1, lon: lon - 0.1 }, bottom_right: { lat: lat - 0.1, lon: lon + 0.1 } } } });
  assert.deepEqual(await ids(near(48.8566, 2.3522)), ['both', 'paris'], 'object');
  assert.deepEqual(await ids(near(51.5074, -0.1278)), ['london'], 'lat,lon string');
  assert.deepEqual(await ids(near(40.7128, -74.006)), ['both', 'newyork'], '[lon, lat] array');
  assert.deepEqual(await ids(near(-17.7134, 178.065)), ['fiji'], 'WKT');
  assert.deepEqual(await ids(near(-21.1789, -175.1982)), ['tonga'], 'geohash, decoded to its cell centre');
});

test('geo_point: out-of-range and malformed values are a 400 naming the field; nothing is written', async () => {
  for (const place of [{ lat: 91, lon: 0 }, '10,200', [0, -100], 'POINT (1)', 'not a hash!', { lat: 'x', lon: 1 }, true]) {
    const response = await call(server, 'PUT', '/extras1/_doc/badgeo?refresh=true', { json: { place } });
    assert.equal(response.status, 400, JSON.stringify(place));
    assert.equal(response.body.error.type, 'mapper_parsing_exception');
    assert.match(response.body.error.reason, /failed to parse field \[place\] of type \[geo_point\]/);
  }
  assert.equal((await call(server, 'GET', '/extras1/_doc/badgeo')).status, 404);
});

test('geo_bounding_box: corners, edges, WKT, boxes across the antimeridian, several points per document', async () => {
  const europe = { top_left: { lat: 60, lon: -10 }, bottom_right: { lat: 40, lon: 20 } };
  assert.deepEqual(await ids({ geo_bounding_box: { place: europe } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_bounding_box: { place: { top_left: '60,-10', bottom_right: [20, 40] } } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_bounding_box: { place: { top_right: 'POINT (20 60)', bottom_left: { lat: 40, lon: -10 } } } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_bounding_box: { place: { top: 60, left: -10, bottom: 40, right: 20 } } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_bounding_box: { place: { wkt: 'BBOX (-10, 20, 60, 40)' } } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_bounding_box: { place: { top: 0, left: 170, bottom: -30, right: -170 } } }), ['fiji', 'tonga'], 'across the antimeridian');
  // The points of "both" are Paris and New York: a box holding Paris's latitude and New York's
  // longitude holds neither point, and must not match.
  assert.deepEqual(await ids({ geo_bounding_box: { place: { top: 49, left: -75, bottom: 48, right: -73 } } }), []);
  assert.deepEqual(await ids({ bool: { filter: [{ geo_bounding_box: { place: europe } }], must_not: [{ exists: { field: 'blob' } }] } }), ['both', 'london']);
  const upside = await searchError({ query: { geo_bounding_box: { place: { top: 10, left: 0, bottom: 20, right: 5 } } } });
  assert.equal(upside.status, 400);
  assert.match(upside.reason, /top is below bottom/);
  const range = await searchError({ query: { geo_bounding_box: { place: { top: 100, left: 0, bottom: 20, right: 5 } } } });
  assert.equal(range.status, 400);
  assert.deepEqual(await ids({ geo_bounding_box: { place: { top: 100, left: 0, bottom: 40, right: 5 }, validation_method: 'IGNORE_MALFORMED' } }), ['both', 'paris']);
});

test('geo_distance: units, distance types, points in any format, several points per document', async () => {
  // Paris to London is about 344 km.
  assert.deepEqual(await ids({ geo_distance: { distance: '340km', place: { lat: 48.8566, lon: 2.3522 } } }), ['both', 'paris']);
  assert.deepEqual(await ids({ geo_distance: { distance: '350km', place: '48.8566,2.3522' } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_distance: { distance: '350000m', place: [2.3522, 48.8566] } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_distance: { distance: '215mi', place: 'POINT (2.3522 48.8566)' } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_distance: { distance: '211mi', place: 'u09tvw0f64r7' } }), ['both', 'paris']);
  assert.deepEqual(await ids({ geo_distance: { distance: 350000, distance_type: 'plane', place: { lat: 48.8566, lon: 2.3522 } } }), ['both', 'london', 'paris']);
  assert.deepEqual(await ids({ geo_distance: { distance: '1000km', place: { lat: -19, lon: -179 } } }), ['fiji', 'tonga'], 'around the antimeridian');
  assert.deepEqual(await ids({ geo_distance: { distance: '10km', place: { lat: 40.7128, lon: -74.006 } } }), ['both', 'newyork']);
  const unit = await searchError({ query: { geo_distance: { distance: '10 parsecs', place: '0,0' } } });
  assert.equal(unit.status, 400);
  assert.match(unit.reason, /distance/);
  const point = await searchError({ query: { geo_distance: { distance: '10km', place: { lat: 95, lon: 0 } } } });
  assert.equal(point.status, 400);
});

test('geo_point: exact queries, sorts, aggregations and other fields are clear 400s; unmapped fields follow ignore_unmapped', async () => {
  const term = await searchError({ query: { term: { place: '1,2' } } });
  assert.equal(term.status, 400);
  assert.match(term.reason, /Geo fields do not support exact searching/);
  const sort = await searchError({ sort: [{ _geo_distance: { place: '0,0', order: 'asc' } }] });
  assert.equal(sort.status, 400);
  assert.match(sort.reason, /sorting by \[_geo_distance\] is not supported/);
  const fieldSort = await searchError({ sort: [{ place: 'asc' }] });
  assert.equal(fieldSort.status, 400);
  assert.match(fieldSort.reason, /geo_point/);
  const agg = await searchError({ size: 0, aggs: { grid: { geohash_grid: { field: 'place' } } } });
  assert.equal(agg.status, 400);
  assert.match(agg.reason, /Unknown aggregation type \[geohash_grid\]/);
  const terms = await searchError({ size: 0, aggs: { keys: { terms: { field: 'place' } } } });
  assert.equal(terms.status, 400);
  assert.match(terms.reason, /fields of type \[geo_point\]/);
  const other = await searchError({ query: { geo_distance: { distance: '1km', body: '0,0' } } });
  assert.equal(other.status, 400);
  assert.match(other.reason, /only geo_point fields/);
  assert.equal((await searchError({ query: { geo_distance: { distance: '1km', missing: '0,0' } } })).status, 400);
  assert.deepEqual(await ids({ geo_distance: { distance: '1km', missing: '0,0', ignore_unmapped: true } }), []);
  // The query_string default of every field leaves geo_point fields out.
  assert.deepEqual(await ids({ query_string: { query: 'brown' } }), ['paris']);
});

test('ignore_malformed: the bad value is skipped, the document indexed with its source, and _ignored names the field', async () => {
  assert.deepEqual(await ids({ exists: { field: 'count' } }), ['paris', 'tonga']);
  assert.deepEqual(await ids({ exists: { field: 'when' } }), ['london']);
  assert.deepEqual(await ids({ exists: { field: 'addr' } }), ['newyork']);
  assert.deepEqual(await ids({ exists: { field: 'spot' } }), ['tonga']);
  assert.deepEqual(await ids({ exists: { field: '_ignored' } }), ['fiji', 'london', 'newyork']);
  assert.deepEqual(await ids({ term: { _ignored: 'count' } }), ['london']);
  assert.deepEqual(await ids({ terms: { _ignored: ['when', 'spot'] } }), ['fiji', 'london', 'newyork']);
  const got = await call(server, 'GET', '/extras1/_doc/london');
  assert.deepEqual(got.body._source, DOCS.london);
  assert.deepEqual(await ids({ match: { body: 'quick' } }), ['paris']);
  // Without ignore_malformed the same value is refused.
  const created = await call(server, 'PUT', '/strict_values', { json: { mappings: { properties: { count: { type: 'integer' }, other: { type: 'integer', ignore_malformed: false } } } } });
  assert.equal(created.status, 200, created.text);
  for (const doc of [{ count: 'many' }, { other: 'x' }]) {
    const refused = await call(server, 'PUT', '/strict_values/_doc/1', { json: doc });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.type, 'mapper_parsing_exception');
  }
  const object = await call(server, 'PUT', '/extras1/_doc/objcount?refresh=true', { json: { count: { nested: 1 }, body: 'object count' } });
  assert.equal(object.status, 201, object.text);
  assert.deepEqual((await call(server, 'POST', '/extras1/_search', { json: { query: { term: { _ignored: 'count' } } } })).body.hits.hits.map((hit: any) => hit._id).sort(), ['london', 'objcount']);
  assert.equal((await call(server, 'DELETE', '/extras1/_doc/objcount?refresh=true')).status, 200);
});

test('mapping validation: the new parameters on the types that take them, kept in GET _mapping', async () => {
  const mapping = await call(server, 'GET', '/extras1/_mapping');
  const properties = mapping.body.extras1.mappings.properties;
  assert.deepEqual(properties.body, { type: 'text', index_prefixes: { min_chars: 1, max_chars: 10 }, index_phrases: true });
  assert.deepEqual(properties.notes, { type: 'match_only_text', index_prefixes: {} });
  assert.deepEqual(properties.blob, { type: 'binary', doc_values: true });
  assert.deepEqual(properties.spot, { type: 'geo_point', ignore_malformed: true });
  for (const [mappings, pattern] of [
    [{ properties: { k: { type: 'keyword', index_prefixes: {} } } }, /index_prefixes\] is not allowed on field \[k\] of type \[keyword\]/],
    [{ properties: { k: { type: 'keyword', ignore_malformed: true } } }, /ignore_malformed\] is not allowed/],
    [{ properties: { t: { type: 'text', index_phrases: 'yes' } } }, /index_phrases\] on field \[t\] must be a boolean/],
    [{ properties: { t: { type: 'text', index_prefixes: { min_chars: 0 } } } }, /min_chars \[0\] must be greater than zero/],
    [{ properties: { t: { type: 'text', index_prefixes: { max_chars: 20 } } } }, /max_chars \[20\] must be less than 20/],
    [{ properties: { t: { type: 'text', index_prefixes: { min_chars: 6, max_chars: 3 } } } }, /min_chars \[6\] must be less than max_chars \[3\]/],
    [{ properties: { t: { type: 'text', index_prefixes: { other: 1 } } } }, /unknown parameter \[other\]/],
    [{ properties: { g: { type: 'geo_point', fields: { k: { type: 'keyword' } } } } }, /fields\] is not allowed/],
    [{ properties: { g: { type: 'geo_point', null_value: 'nowhere!' } } }, /null_value/],
  ] as const) {
    const refused = await createError(mappings);
    assert.equal(refused.status, 400, JSON.stringify(mappings));
    assert.equal(refused.type, 'mapper_parsing_exception');
    assert.match(refused.reason, pattern);
  }
  const update = await call(server, 'PUT', '/extras1/_mapping', { json: { properties: { body: { type: 'text', index_phrases: false } } } });
  assert.equal(update.status, 400, 'index_phrases cannot change');
  const flip = await call(server, 'PUT', '/extras1/_mapping', { json: { properties: { blob: { type: 'binary' } } } });
  assert.equal(flip.status, 400, 'doc_values of a binary field cannot change');  // index_options and term_vector: kept (Trove indexes positions and highlights by re-analysis whatever they say).
  const vectors = await call(server, 'PUT', '/extras-vectors', { json: { mappings: { properties: { t: { type: 'text', index_options: 'offsets', term_vector: 'with_positions_offsets' }, d: { type: 'text', index_options: 'docs' } } } } });
  assert.equal(vectors.status, 200, vectors.text);
  assert.deepEqual((await call(server, 'GET', '/extras-vectors/_mapping')).body['extras-vectors'].mappings.properties.t, { type: 'text', index_options: 'offsets', term_vector: 'with_positions_offsets' });
  await call(server, 'PUT', '/extras-vectors/_doc/1?refresh=true', { json: { t: 'quick brown fox', d: 'lazy dog' } });
  const highlighted = await call(server, 'POST', '/extras-vectors/_search', { json: { query: { match_phrase: { t: 'brown fox' } }, highlight: { fields: { t: {} } } } });
  assert.deepEqual(highlighted.body.hits.hits[0].highlight, { t: ['quick <em>brown</em> <em>fox</em>'] });
  for (const [mappings, pattern] of [
    [{ properties: { t: { type: 'text', index_options: 'everything' } } }, /Unknown value \[everything\] for field \[index_options\]/],
    [{ properties: { t: { type: 'text', term_vector: 7 } } }, /for field \[term_vector\]/],
    [{ properties: { k: { type: 'keyword', term_vector: 'yes' } } }, /term_vector\] is not allowed on field \[k\] of type \[keyword\]/],
  ] as const) {
    const refused = await createError(mappings);
    assert.equal(refused.status, 400, JSON.stringify(mappings));
    assert.match(refused.reason, pattern);
  }
  assert.equal((await call(server, 'PUT', '/extras-vectors/_mapping', { json: { properties: { t: { type: 'text', index_options: 'docs' } } } })).status, 400, 'index_options cannot change');
});

test('a geo_point added by PUT _mapping takes points from new writes and partial updates', async () => {
  const added = await call(server, 'PUT', '/extras3/_mapping', { json: { properties: { home: { type: 'geo_point' } } } });
  assert.equal(added.status, 200, added.text);
  const written = await call(server, 'PUT', '/extras3/_doc/homed?refresh=true', { json: { home: '10,10' } });
  assert.equal(written.status, 201, written.text);
  const updated = await call(server, 'POST', '/extras3/_update/paris?refresh=true', { json: { doc: { home: { lat: -10, lon: -10 } } } });
  assert.equal(updated.status, 200, updated.text);
  const search = async (query: unknown): Promise<string[]> => {
    const response = await call(server, 'POST', '/extras3/_search', { json: { query } });
    assert.equal(response.status, 200, response.text);
    return response.body.hits.hits.map((hit: any) => hit._id).sort();
  };
  assert.deepEqual(await search({ geo_distance: { distance: '1km', home: '10,10' } }), ['homed']);
  assert.deepEqual(await search({ geo_distance: { distance: '1km', home: [-10, -10] } }), ['paris']);
  assert.deepEqual(await search({ geo_distance: { distance: '1km', place: '48.8566,2.3522' } }), ['both', 'paris'], 'the update kept the other fields');
  assert.equal((await call(server, 'DELETE', '/extras3/_doc/homed?refresh=true')).status, 200);
});

test('after a merge into segments and a restart the geo points, binary values and _ignored are still there', async () => {
  for (const name of COLLECTIONS) {
    const merged = await call(server, 'POST', `/${name}/_forcemerge`);
    assert.equal(merged.status, 200, merged.text);
  }
  const check = async (): Promise<void> => {
    assert.deepEqual(await ids({ geo_bounding_box: { place: { top: 49, left: -75, bottom: 48, right: -73 } } }), []);
    assert.deepEqual(await ids({ geo_distance: { distance: '350km', place: '48.8566,2.3522' } }), ['both', 'london', 'paris']);
    assert.deepEqual(await ids({ geo_distance: { distance: '10km', place: { lat: 40.7128, lon: -74.006 } } }), ['both', 'newyork']);
    assert.deepEqual(await ids({ exists: { field: 'raw' } }), ['both', 'paris']);
    assert.deepEqual(await ids({ exists: { field: 'blob' } }), ['paris']);
    assert.deepEqual(await ids({ term: { _ignored: 'addr' } }), ['london']);
  };
  await check();
  await server.restart();
  await check();
});
