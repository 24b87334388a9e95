import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBulkBody } from './bulk-body.ts';
import { ApiError } from './errors.ts';

function refusedWith(text: string, pattern: RegExp): void {
  assert.throws(
    () => parseBulkBody(text),
    (error: unknown) => error instanceof ApiError && error.code === 'malformed_bulk' && pattern.test(error.message),
  );
}

test('parses the four actions with their metadata, CRLF and blank lines', () => {
  const text = [
    '{"index":{"_index":"a","_id":"1","routing":"r"}}',
    '{"x":1}',
    '',
    '{"create":{"_id":2}}\r',
    '{"x":2}\r',
    '{"update":{"_id":"3","retry_on_conflict":2,"_source":true,"if_seq_no":4,"if_primary_term":1}}',
    '{"doc":{"x":3}}',
    '{"delete":{"_id":"4"}}',
    '{"index":{"op_type":"create"}}',
    '{"x":5}',
  ].join('\n');
  const entries = parseBulkBody(text);
  assert.equal(entries.length, 5);
  const items = entries.map((entry) => (entry.kind === 'item' ? entry.item : null));
  const { text: firstText, ...first } = items[0]!;
  assert.deepEqual(first, { action: 'index', collection: 'a', id: '1', routing: 'r', ifSeqNo: undefined, ifPrimaryTerm: undefined, retryOnConflict: undefined });
  assert.equal(Buffer.from(firstText!.bytes).toString(), '{"x":1}');
  assert.deepEqual(firstText!.parse(), { x: 1 });
  assert.equal(items[1]!.action, 'create');
  assert.equal(items[1]!.id, '2');
  assert.equal(Buffer.from(items[1]!.text!.bytes).toString(), '{"x":2}', 'the line break and the carriage return before it are left out');
  assert.deepEqual(items[2]!.body, { doc: { x: 3 } });
  assert.equal(items[2]!.retryOnConflict, 2);
  assert.equal(items[2]!.ifSeqNo, 4);
  assert.deepEqual(items[2]!.source, { source: true });
  assert.deepEqual(items[3]!.body, undefined);
  assert.equal(items[3]!.action, 'delete');
  assert.equal(items[4]!.action, 'create');
});

test('an update body that does not parse fails only its item', () => {
  const entries = parseBulkBody('{"update":{"_id":"1"}}\n{"doc": \n{"index":{"_id":"2"}}\n{"x":2}\n');
  assert.equal(entries[0]!.kind, 'failed');
  if (entries[0]!.kind === 'failed') {
    assert.equal(entries[0]!.id, '1');
    assert.equal(entries[0]!.error.code, 'invalid_json');
  }
  assert.equal(entries[1]!.kind, 'item');
  let deep: unknown = 0;
  for (let level = 0; level < 25; level++) deep = { level: deep };
  const tooDeep = parseBulkBody(`{"update":{"_id":"1"}}\n${JSON.stringify({ doc: deep })}\n`);
  assert.equal(tooDeep[0]!.kind === 'failed' && tooDeep[0]!.error.code, 'nesting_too_deep');
});

test('a document line stays text; parsing it here reports the error its item fails with', () => {
  const entries = parseBulkBody('{"index":{"_id":"1"}}\n{"x": \n{"index":{"_id":"2"}}\n{"x":2}\n');
  const [broken] = entries.map((entry) => (entry.kind === 'item' ? entry.item.text! : null));
  assert.throws(() => broken!.parse(), (error: unknown) => error instanceof ApiError && error.code === 'invalid_json' && /the source on line \[2\]/.test(error.message));
  let deep: unknown = 0;
  for (let level = 0; level < 25; level++) deep = { level: deep };
  const [tooDeep] = parseBulkBody(`{"index":{}}\n${JSON.stringify(deep)}\n`);
  assert.throws(() => tooDeep!.kind === 'item' && tooDeep.item.text!.parse(), (error: unknown) => error instanceof ApiError && error.code === 'nesting_too_deep');
  assert.equal(tooDeep!.kind === 'item' && tooDeep.item.text!.maxDepth, 20);
});

test('_type in an action line is read and ignored, as OpenSearch does', () => {
  const entries = parseBulkBody('{"index":{"_type":"_doc","_id":"1"}}\n{"x":1}\n');
  assert.deepEqual(entries.map((entry) => entry.kind === 'item' && entry.item.id), ['1']);
});

test('an empty _id is passed on, so that the node fails that item only', () => {
  const entries = parseBulkBody('{"index":{"_id":""}}\n{"x":1}\n{"index":{"_id":"2"}}\n{"x":2}\n');
  assert.deepEqual(entries.map((entry) => entry.kind === 'item' && entry.item.id), ['', '2']);
});

test('malformed action lines and missing sources refuse the whole body', () => {
  refusedWith('', /at least one action/);
  refusedWith('{"index": \n{}\n', /line \[1\]/);
  refusedWith('{"upsert":{}}\n{}\n', /expected exactly one of/);
  refusedWith('{"index":{},"delete":{}}\n{}\n', /expected exactly one of/);
  refusedWith('{"index":[]}\n{}\n', /must be an object/);
  refusedWith('{"index":{"_parent":"doc"}}\n{}\n', /unknown parameter \[_parent\]/);
  refusedWith('{"index":{}}\n{}\n{}\n', /line \[3\], expected FIELD_NAME but found \[END_OBJECT\]/);
  refusedWith('{"index":{"_id":[]}}\n{}\n', /\[_id\] must be a non-empty string/);
  refusedWith('{"index":{"if_seq_no":-1}}\n{}\n', /\[if_seq_no\]/);
  refusedWith('{"delete":{"_id":"1"}}\n{"index":{"_id":"2"}}\n', /line \[2\] has no source line/);
});

test('a source line longer than the document limit fails only its item, before it is parsed', () => {
  const big = JSON.stringify({ x: 'y'.repeat(100) });
  const body = `{"index":{"_id":"1"}}\n${big}\r\n{"update":{"_index":"u","_id":"2"}}\n{"doc": ${big}\n{"index":{"_id":"3"}}\n{"x":3}\n`;
  const entries = parseBulkBody(body, big.length - 1);
  assert.deepEqual(entries.map((entry) => entry.kind), ['failed', 'failed', 'item']);
  const [first, second] = entries;
  assert.ok(first!.kind === 'failed' && second!.kind === 'failed');
  assert.equal(first.error.code, 'document_too_large');
  assert.equal(first.error.message, `document of [${big.length}] bytes exceeds [indexing.max_document_bytes] of [${big.length - 1}] bytes`);
  assert.deepEqual([second.action, second.index, second.id, second.error.code], ['update', 'u', '2', 'document_too_large'], 'an update line is not parsed either (it does not parse)');
  const [atLimit] = parseBulkBody(body, big.length);
  assert.ok(atLimit!.kind === 'item' && atLimit.item.text!.bytes.length === big.length, 'a line of exactly the limit is taken (its \r is not counted)');
});
