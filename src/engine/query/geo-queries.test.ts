import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSort } from '../collect/sort-spec.ts';
import { EngineError } from '../errors.ts';
import { executeQuery } from './execute.ts';
import { normalizePoint } from './geo-queries.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { place: { type: 'geo_point' }, name: { type: 'keyword' }, raw: { type: 'binary' }, kept: { type: 'binary', doc_values: true } } });

const docs: CorpusDoc[] = [
  { id: 'origin', source: { place: '0,0', raw: 'YWJj', kept: 'YWJj' } },
  { id: 'east', source: { place: { lat: 0, lon: 1 } } },
  { id: 'north', source: { place: [0, 1] } },
  { id: 'far', source: { place: 'POINT (100 45)' } },
  { id: 'dateline', source: { place: { lat: 0, lon: 179.9 } } },
  // Its latitudes are 0 and 45 and its longitudes 100 and 0: the pairs are (0, 100) and (45, 0).
  { id: 'pair', source: { place: [[100, 0], [0, 45]] } },
  { id: 'nothing', source: { name: 'x' } },
];
const leaves = [buildLeaf(docs.slice(0, 3), fields, 0), buildLeaf(docs.slice(3), fields, 1)];

function ids(query: unknown): string[] {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20 });
  return hitIds(leaves, result.hits).sort();
}

function fails(query: unknown, pattern: RegExp): void {
  assert.throws(() => ids(query), (error: unknown) => error instanceof EngineError && pattern.test(error.message), JSON.stringify(query));
}

test('geo_bounding_box keeps the docs with a point inside, pairing the points of multi-point docs', () => {
  assert.deepEqual(ids({ geo_bounding_box: { place: { top_left: '1.5,-0.5', bottom_right: '-0.5,1.5' } } }), ['east', 'north', 'origin']);
  assert.deepEqual(ids({ geo_bounding_box: { place: { top: 46, left: 99, bottom: 44, right: 101 } } }), ['far']);
  assert.deepEqual(ids({ geo_bounding_box: { place: { top: 1, left: 99, bottom: -1, right: 101 } } }), ['pair']);
  assert.deepEqual(ids({ geo_bounding_box: { place: { top: 46, left: -1, bottom: 44, right: 1 } } }), ['pair']);
  assert.deepEqual(ids({ geo_bounding_box: { place: { top: 46, left: 99, bottom: 44, right: 99.5 } } }), [], 'no mixing of pairs');
  assert.deepEqual(ids({ geo_bounding_box: { place: { top: 1, left: 179, bottom: -1, right: -179 } } }), ['dateline']);
  assert.deepEqual(ids({ geo_bounding_box: { place: { wkt: 'BBOX (-0.5, 0.5, 0.5, -0.5)' } } }), ['origin']);
  fails({ geo_bounding_box: { place: { top: 1, left: 0 } } }, /missing its \[bottom, right\]/);
  fails({ geo_bounding_box: { place: { top: -1, left: 0, bottom: 1, right: 1 } } }, /top is below bottom/);
  fails({ geo_bounding_box: { place: { top: 1, left: 0, bottom: 0, right: 200 } } }, /illegal longitude/);
  fails({ geo_bounding_box: { name: { top: 1, left: 0, bottom: 0, right: 1 } } }, /only geo_point fields/);
  fails({ geo_bounding_box: { place: { top: 1, left: 0, bottom: 0, right: 1 }, other: {} } }, /exactly one field/);
});

test('geo_distance measures from any point format, in any unit, arc or plane', () => {
  // One degree at the equator is about 111.2 km.
  assert.deepEqual(ids({ geo_distance: { distance: '111km', place: '0,0' } }), ['origin']);
  assert.deepEqual(ids({ geo_distance: { distance: '112km', place: [0, 0] } }), ['east', 'north', 'origin']);
  assert.deepEqual(ids({ geo_distance: { distance: 112_000, distance_type: 'plane', place: { lat: 0, lon: 0 } } }), ['east', 'north', 'origin']);
  assert.deepEqual(ids({ geo_distance: { distance: '70mi', place: 's00000000000' } }), ['east', 'north', 'origin']);
  assert.deepEqual(ids({ geo_distance: { distance: '50km', place: { lat: 0, lon: -179.9 } } }), ['dateline'], 'across the antimeridian');
  assert.deepEqual(ids({ geo_distance: { distance: '10km', place: '45,0' } }), ['pair']);
  assert.deepEqual(ids({ geo_distance: { distance: '10km', place: '45,100' } }), ['far']);
  assert.deepEqual(ids({ geo_distance: { distance: 5, unit: 'km', place: '45,100.05' } }), ['far'], 'a number and a unit');
  fails({ geo_distance: { place: '0,0' } }, /requires a \[distance\]/);
  fails({ geo_distance: { distance: 'far', place: '0,0' } }, /failed to parse \[distance\]/);
  fails({ geo_distance: { distance: '1km', place: '0,0', distance_type: 'sloppy' } }, /distance_type/);
  fails({ geo_distance: { distance: '1km', place: '95,0' } }, /illegal latitude/);
  fails({ geo_distance: { distance: '1km', missing: '0,0' } }, /failed to find geo field \[missing\]/);
  assert.deepEqual(ids({ geo_distance: { distance: '1km', missing: '0,0', ignore_unmapped: true } }), []);
  assert.deepEqual(ids({ geo_distance: { distance: '1km', place: '95,0', validation_method: 'coerce' } }), [], 'coerced to 85,180');
});

test('exists on geo_point and on binary without doc values; exact queries on geo_point are refused', () => {
  assert.deepEqual(ids({ exists: { field: 'place' } }), ['dateline', 'east', 'far', 'north', 'origin', 'pair']);
  assert.deepEqual(ids({ exists: { field: 'raw' } }), ['origin']);
  assert.deepEqual(ids({ exists: { field: 'kept' } }), ['origin']);
  for (const query of [
    { term: { kept: 'YWJj' } },
    { term: { kept: { value: 'ywjj', case_insensitive: true } } },
    { prefix: { kept: { value: 'y', case_insensitive: true } } },
    { wildcard: { kept: 'Y*' } },
    { range: { kept: { gte: 'A' } } },
    { match: { raw: 'YWJj' } },
  ]) {
    fails(query, /Binary fields do not support searching/);
  }
  fails({ term: { place: '0,0' } }, /Geo fields do not support exact searching/);
  fails({ match: { place: '0,0' } }, /Geo fields do not support exact searching/);
  assert.deepEqual(ids({ query_string: { query: 'x' } }), ['nothing'], 'query_string over every field skips geo_point');
});

test('coerce folds latitudes and wraps longitudes', () => {
  assert.deepEqual(normalizePoint({ lat: 95, lon: 0 }), { lat: 85, lon: 180 });
  assert.deepEqual(normalizePoint({ lat: 0, lon: 190 }), { lat: 0, lon: -170 });
  assert.deepEqual(normalizePoint({ lat: -95, lon: 10 }), { lat: -85, lon: -170 });
  assert.deepEqual(normalizePoint({ lat: 10, lon: -540 }), { lat: 10, lon: 180 });
  assert.deepEqual(normalizePoint({ lat: 10, lon: -180 }), { lat: 10, lon: -180 }, 'in range: kept');
});

test('sorting by _geo_distance is a clear 400, as is sorting on the geo_point field itself or a binary field', () => {
  assert.throws(() => parseSort([{ _geo_distance: { place: '0,0', order: 'asc' } }], fields), /sorting by \[_geo_distance\] is not supported/);
  assert.throws(() => parseSort([{ place: 'asc' }], fields), /geo_point/);
  assert.throws(() => parseSort([{ kept: 'asc' }], fields), /can't sort on binary field \[kept\]/, 'binary doc values do not sort (as in Elasticsearch)');
});
