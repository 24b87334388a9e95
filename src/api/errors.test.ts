import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CatalogError } from '../cluster/catalog-error.ts';
import { EngineError } from '../engine/errors.ts';
import { NodeError } from '../node/node-error.ts';
import { ApiError, ERROR_TABLE, classifyError, renderError } from './errors.ts';

test('every code maps to an ES exception type and an HTTP error status', () => {
  for (const [code, kind] of Object.entries(ERROR_TABLE)) {
    assert.match(kind.type, /^[a-z_]+$/, code);
    assert.ok(kind.status >= 400 && kind.status < 600, code);
  }
  assert.deepEqual(ERROR_TABLE.version_conflict, { type: 'version_conflict_engine_exception', status: 409 });
  assert.deepEqual(ERROR_TABLE.index_not_found, { type: 'index_not_found_exception', status: 404 });
  assert.equal(ERROR_TABLE.body_too_large.status, 413);
});

test('renders the ES error body with root_cause and status', () => {
  const rendered = renderError(new EngineError('mapper_parsing', 'failed to parse field [n] of type [long]'));
  assert.equal(rendered.status, 400);
  assert.deepEqual(rendered.body, {
    error: {
      type: 'mapper_parsing_exception',
      reason: 'failed to parse field [n] of type [long]',
      root_cause: [{ type: 'mapper_parsing_exception', reason: 'failed to parse field [n] of type [long]' }],
    },
    status: 400,
  });
});

test('collection-level node and catalog errors name the collection in `index`', () => {
  const rendered = renderError(new NodeError('index_not_found', 'no such index [logs]'), 'logs');
  assert.equal(rendered.status, 404);
  assert.equal(rendered.body.error.index, 'logs');
  assert.equal(rendered.body.error.root_cause[0]!.index, 'logs');
  assert.equal(classifyError(new CatalogError('resource_already_exists', 'exists'), 'x').index, 'x');
  assert.equal(classifyError(new NodeError('shard_unavailable', 'closed'), 'x').index, undefined);
  assert.equal(renderError(new ApiError('no_handler', 'no handler')).status, 400);
});

test('Fastify errors map to their table entries', () => {
  assert.equal(classifyError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413, message: 'x' }).code, 'body_too_large');
  assert.equal(classifyError({ code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415, message: 'x' }).code, 'unsupported_media_type');
  assert.equal(classifyError({ code: 'FST_ERR_SOMETHING', statusCode: 400, message: 'bad' }).code, 'bad_request');
  assert.equal(classifyError(new Error('boom')).code, 'internal');
  assert.equal(renderError(new TypeError('x')).status, 500);
});

test('validation failures name the offending parameter or field', () => {
  const failure = (validationContext: string, instancePath: string, params: Record<string, unknown>, message = 'must be integer') => ({
    code: 'FST_ERR_VALIDATION',
    statusCode: 400,
    message: 'validation failed',
    validationContext,
    validation: [{ instancePath, message, params }],
  });
  assert.deepEqual(classifyError(failure('querystring', '', { additionalProperty: 'foo' })), {
    code: 'invalid_parameter',
    reason: 'request contains unrecognized parameter: [foo]',
  });
  assert.deepEqual(classifyError(failure('querystring', '/size', {})), { code: 'invalid_parameter', reason: 'parameter [size] must be integer' });
  assert.deepEqual(classifyError(failure('body', '/query', { additionalProperty: 'bogus' })), {
    code: 'invalid_body',
    reason: 'unknown field [query.bogus] in the request body',
  });
  assert.deepEqual(classifyError(failure('body', '/ops/0', { missingProperty: 'op' })), {
    code: 'invalid_body',
    reason: 'the request body is missing the required field [ops.0.op]',
  });
  assert.deepEqual(classifyError(failure('body', '', {}, 'must be object')), { code: 'invalid_body', reason: 'the request body must be object' });
});
