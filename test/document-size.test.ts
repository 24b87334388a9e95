/**
 * `indexing.max_document_bytes` (hardening issue, item 4), on a real server started with a 4kb
 * limit: a single-document write (`_doc`, `_create`, `_update`) over it is a 400 that writes and
 * creates nothing, checked on the bytes before they are parsed (a chunked body too); a bulk line over
 * it fails its item only; a document of exactly the limit is taken; and the limit changes at runtime
 * through `PUT /_node/_local/settings`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, sendRefusable, startServer, type HttpResponse, type TroveServer } from './harness.ts';

const LIMIT = 4096;

let server: TroveServer;

/** A JSON document of exactly `bytes` bytes. */
function documentOf(bytes: number): string {
  const text = JSON.stringify({ text: 'x'.repeat(bytes - '{"text":""}'.length) });
  assert.equal(Buffer.byteLength(text), bytes);
  return text;
}

/** The reason of a document of `bytes` bytes refused under `limit`. */
function reason(bytes: number, limit = LIMIT): string {
  return `document of [${bytes}] bytes exceeds [indexing.max_document_bytes] of [${limit}] bytes`;
}

/** Sends a raw JSON body. */
function send(method: string, path: string, body: string): Promise<HttpResponse> {
  return call(server, method, path, { body, headers: { 'content-type': 'application/json' } });
}

/** Checks a 400 illegal_argument_exception with the document size reason. */
function assertTooLarge(response: { status: number; body: any }, bytes: number, limit = LIMIT): void {
  assert.equal(response.status, 400, JSON.stringify(response.body));
  assert.equal(response.body.status, 400);
  assert.equal(response.body.error.type, 'illegal_argument_exception');
  assert.equal(response.body.error.reason, reason(bytes, limit));
  assert.deepEqual(response.body.error.root_cause, [{ type: 'illegal_argument_exception', reason: reason(bytes, limit) }]);
}

async function documentCount(collection: string): Promise<number> {
  await call(server, 'POST', `/${collection}/_refresh`);
  return (await call(server, 'GET', `/${collection}/_count`)).body.count;
}

before(async () => {
  server = await startServer({ settings: { 'indexing.max_document_bytes': '4kb' } });
  assert.equal((await call(server, 'PUT', '/docs')).status, 200);
  assert.equal((await send('PUT', '/docs/_doc/small', '{"text":"small"}')).status, 201);
});

after(async () => {
  await server?.cleanup();
});

test('a single document over the limit is a 400 on every write route, and nothing is written or created', async () => {
  const over = documentOf(LIMIT + 1);
  for (const [method, path] of [['PUT', '/docs/_doc/big'], ['POST', '/docs/_doc/big'], ['POST', '/docs/_doc'], ['PUT', '/docs/_create/big'], ['POST', '/docs/_create/big']]) {
    assertTooLarge(await send(method!, path!, over), LIMIT + 1);
  }
  const update = `{"doc":${documentOf(LIMIT)},"doc_as_upsert":true}`;
  assertTooLarge(await send('POST', '/docs/_update/big', update), Buffer.byteLength(update));
  const upsert = `{"doc":{"text":"a"},"upsert":${documentOf(LIMIT)}}`;
  assertTooLarge(await send('POST', '/docs/_update/small', upsert), Buffer.byteLength(upsert));
  assert.equal((await call(server, 'GET', '/docs/_doc/small')).body._source.text, 'small', 'a refused update leaves its document as it was');
  assert.equal((await call(server, 'GET', '/docs/_doc/big')).status, 404);
  assert.equal(await documentCount('docs'), 1);

  assertTooLarge(await send('PUT', '/fresh/_doc/1', over), LIMIT + 1);
  assert.equal((await call(server, 'GET', '/fresh')).status, 404, 'a refused write does not create its collection');

  // Without Content-Length (chunked), the bytes read are what counts.
  const chunked = await sendRefusable(server, 'PUT', '/docs/_doc/chunked', [Buffer.from(over.slice(0, 2000)), Buffer.from(over.slice(2000))], { 'content-type': 'application/json' });
  assertTooLarge(chunked, LIMIT + 1);
  assert.equal((await call(server, 'GET', '/docs/_doc/chunked')).status, 404);
});

test('a document of exactly the limit is taken, by every write route', async () => {
  const exact = documentOf(LIMIT);
  assert.equal((await send('PUT', '/docs/_doc/exact', exact)).status, 201);
  assert.equal((await send('PUT', '/docs/_create/exact-create', exact)).status, 201);
  assert.equal((await send('POST', '/docs/_doc', exact)).status, 201);
  const update = `{"doc":${documentOf(LIMIT - '{"doc":}'.length)}}`;
  assert.equal(Buffer.byteLength(update), LIMIT);
  assert.equal((await send('POST', '/docs/_update/exact', update)).status, 200);
  assert.equal(await documentCount('docs'), 4);
});

test('a bulk line over the limit fails only its item, with the same error; the rest is applied', async () => {
  await call(server, 'PUT', '/bulked');
  const over = JSON.parse(documentOf(LIMIT + 10));
  const body = ndjson([
    { index: { _id: '1' } },
    { text: 'one' },
    { index: { _id: '2' } },
    over,
    { create: { _id: '3' } },
    over,
    { update: { _id: '1' } },
    { doc: over },
    { create: { _id: '4' } },
    JSON.parse(documentOf(LIMIT)),
    { delete: { _id: 'missing' } },
  ]);
  const response = await call(server, 'POST', '/bulked/_bulk', { body, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.errors, true);
  const items = response.body.items as Array<Record<string, { _index: string; _id: string; status: number; error?: { type: string; reason: string } }>>;
  assert.deepEqual(items.map((item) => Object.keys(item)[0]), ['index', 'index', 'create', 'update', 'create', 'delete']);
  assert.deepEqual(items.map((item) => Object.values(item)[0]!.status), [201, 400, 400, 400, 201, 404]);
  for (const [position, bytes] of [[1, LIMIT + 10], [2, LIMIT + 10], [3, LIMIT + 10 + '{"doc":}'.length]] as const) {
    const item = Object.values(items[position]!)[0]!;
    assert.equal(item._index, 'bulked');
    assert.deepEqual(item.error, { type: 'illegal_argument_exception', reason: reason(bytes), index: 'bulked' });
  }
  assert.equal((await call(server, 'GET', '/bulked/_doc/1')).body._source.text, 'one', 'the refused update changed nothing');
  for (const id of ['2', '3']) assert.equal((await call(server, 'GET', `/bulked/_doc/${id}`)).status, 404);
  assert.equal(await documentCount('bulked'), 2);
});

test('the limit is dynamic: PUT /_node/_local/settings changes it at once, within its bounds', async () => {
  const document = documentOf(6000);
  assertTooLarge(await send('PUT', '/docs/_doc/grown', document), 6000);
  const raised = await call(server, 'PUT', '/_node/_local/settings', { json: { 'indexing.max_document_bytes': '8kb' } });
  assert.equal(raised.status, 200, raised.text);
  assert.equal((await call(server, 'GET', '/_node/_local/settings')).body.settings['indexing.max_document_bytes'], 8192);
  try {
    assert.equal((await send('PUT', '/docs/_doc/grown', document)).status, 201);
    const bulk = ndjson([{ index: { _id: 'grown-bulk' } }, JSON.parse(document)]);
    assert.equal((await call(server, 'POST', '/docs/_bulk', { body: bulk, headers: { 'content-type': 'application/x-ndjson' } })).body.errors, false);
    assertTooLarge(await send('PUT', '/docs/_doc/larger', documentOf(9000)), 9000, 8192);

    const tooSmall = await call(server, 'PUT', '/_node/_local/settings', { json: { 'indexing.max_document_bytes': '100b' } });
    assert.equal(tooSmall.status, 400, tooSmall.text);
    assert.match(tooSmall.body.error.reason, /indexing\.max_document_bytes/);
  } finally {
    const reset = await call(server, 'PUT', '/_node/_local/settings', { json: { 'indexing.max_document_bytes': null } });
    assert.equal(reset.status, 200, reset.text);
  }
  assertTooLarge(await send('PUT', '/docs/_doc/again', document), 6000);
});

test('a 50 MB document or bulk line is refused without being parsed, in well under the time parsing it took', async () => {
  const huge = documentOf(50 * 1024 * 1024);
  let started = performance.now();
  assertTooLarge(await send('PUT', '/docs/_doc/huge', huge), huge.length);
  const single = performance.now() - started;
  started = performance.now();
  const bulk = `{"index":{"_id":"huge"}}\n${huge}\n{"index":{"_id":"beside"}}\n{"text":"beside"}\n`;
  const response = await call(server, 'POST', '/docs/_bulk', { body: bulk, headers: { 'content-type': 'application/x-ndjson' } });
  const bulked = performance.now() - started;
  assert.deepEqual(response.body.items.map((item: { index: { status: number } }) => item.index.status), [400, 201]);
  assert.ok(single < 2_000 && bulked < 2_000, `refused in ${Math.round(single)} ms and ${Math.round(bulked)} ms`);
  assert.equal((await call(server, 'GET', '/docs/_doc/huge')).status, 404);
});
