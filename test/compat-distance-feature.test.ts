/**
 * The `distance_feature` query through real HTTP on a one-shard and a three-shard collection: on
 * `date`, `date_nanos` and `geo_point` fields every document with a value matches, scored
 * `boost * pivot / (pivot + distance)` from its closest value; inside a bool `should` it boosts
 * the closest documents; refusals are 400s in OpenSearch's words.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const DAY = 86_400_000;
const DOCS: Record<string, Record<string, unknown>> = {
  a: { title: 'fresh news', when: '2024-01-10', nanos: '2024-01-10T00:00:00.000000001Z', place: { lat: 48.8566, lon: 2.3522 } },
  b: { title: 'old news', when: '2023-12-31', place: [{ lat: 51.5074, lon: -0.1278 }, { lat: 48.86, lon: 2.35 }] },
  c: { title: 'news', when: ['2020-01-01', '2024-01-13'] },
  d: { title: 'no dates' },
};

before(async () => {
  server = await startServer();
  for (const [name, shards] of [['feat1', 1], ['feat3', 3]] as const) {
    const created = await call(server, 'PUT', `/${name}`, {
      json: {
        settings: { number_of_shards: shards },
        mappings: { properties: { title: { type: 'text' }, when: { type: 'date' }, nanos: { type: 'date_nanos' }, place: { type: 'geo_point' }, tag: { type: 'keyword' } } },
      },
    });
    assert.equal(created.status, 200, created.text);
    const body = ndjson(Object.entries(DOCS).flatMap(([id, doc]) => [{ index: { _id: id } }, doc]));
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
});

after(async () => {
  await server?.cleanup();
});

/** id → score of a query, checked equal on one and three shards. */
async function scores(query: unknown): Promise<Record<string, number>> {
  const answers: Record<string, number>[] = [];
  for (const name of ['feat1', 'feat3']) {
    const response = await call(server, 'POST', `/${name}/_search`, { json: { query, size: 10 } });
    assert.equal(response.status, 200, response.text);
    answers.push(Object.fromEntries(response.body.hits.hits.map((hit: any) => [hit._id, hit._score])));
  }
  assert.deepEqual(answers[1], answers[0]);
  return answers[0]!;
}

function near(actual: number | undefined, expected: number): void {
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-5, `${actual} is not ${expected}`);
}

test('dates score by the closest value: boost * pivot / (pivot + distance)', async () => {
  const got = await scores({ distance_feature: { field: 'when', origin: '2024-01-10', pivot: '7d', boost: 2 } });
  assert.deepEqual(Object.keys(got).sort(), ['a', 'b', 'c']);
  near(got.a, 2);
  near(got.b, (2 * 7 * DAY) / (7 * DAY + 10 * DAY));
  near(got.c, (2 * 7 * DAY) / (7 * DAY + 3 * DAY));
  const math = await scores({ distance_feature: { field: 'when', origin: '2024-01-11||-1d', pivot: '12h' } });
  near(math.a, 1);
  const nanos = await scores({ distance_feature: { field: 'nanos', origin: '2024-01-11', pivot: '1d' } });
  assert.deepEqual(Object.keys(nanos), ['a']);
  near(nanos.a, 0.5);
});

test('geo points score by arc distance, several points by the closest', async () => {
  const got = await scores({ distance_feature: { field: 'place', origin: [2.3522, 48.8566], pivot: '1km' } });
  assert.deepEqual(Object.keys(got).sort(), ['a', 'b']);
  near(got.a, 1);
  assert.ok(got.b! > 0.5 && got.b! < 1, String(got.b));
  const paris = await scores({ distance_feature: { field: 'place', origin: '51.5074,-0.1278', pivot: '100km' } });
  near(paris.b, 1);
  assert.ok(paris.a! < 0.5);
});

test('in a bool should it ranks the closest documents first', async () => {
  const response = await call(server, 'POST', '/feat3/_search', {
    json: { query: { bool: { must: [{ match: { title: 'news' } }], should: [{ distance_feature: { field: 'when', origin: '2024-01-13', pivot: '1d', boost: 10 } }] } } },
  });
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.hits.hits[0]._id, 'c');
});

test('refusals', async () => {
  const refuse = async (body: unknown, pattern: RegExp): Promise<void> => {
    const response = await call(server, 'POST', '/feat1/_search', { json: { query: { distance_feature: body } } });
    assert.equal(response.status, 400, response.text);
    assert.match(response.body.error.reason, pattern);
  };
  await refuse({ field: 'tag', origin: 'x', pivot: '1d' }, /Illegal data type of \[keyword\]!\[distance_feature\] query can only be run on a date, date_nanos or geo_point field type!/);
  await refuse({ field: 'when', origin: 'now' }, /requires \[pivot\]/);
  await refuse({ field: 'when', origin: 'now', pivot: 'soon' }, /failed to parse \[pivot\]/);
  await refuse({ field: 'place', origin: [0, 0], pivot: '1d' }, /failed to parse \[pivot\]/);
  await refuse({ field: 'when', origin: 'yesterday', pivot: '1d' }, /failed to parse \[origin\]/);
  await refuse({ field: 'when', origin: 'now', pivot: '1d', bogus: 1 }, /bogus/);
  assert.deepEqual(await scores({ distance_feature: { field: 'missing', origin: 'now', pivot: '1d' } }), {});
});
