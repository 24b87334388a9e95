/**
 * Request body parsers. JSON bodies are accepted as `application/json` and the vendor types ES
 * clients send (`application/vnd.opensearch+json`, `application/vnd.elasticsearch+json`, with
 * or without `compatible-with=N`); a body without a Content-Type is read as JSON too. Every
 * parser enforces `http.max_content_length` (413, checked against Content-Length before
 * reading) and the JSON nesting limit. `_bulk` routes take the raw bytes instead, `_msearch` the raw text.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import { parseJsonText } from './json-body.ts';

const JSON_TYPES = ['application/json', 'application/x-ndjson'];
const VENDOR_JSON = /^application\/vnd\.(opensearch|elasticsearch)\+(json|x-ndjson)\b/;

/** Replaces Fastify's default parsers with the JSON parsers described above. */
export function installJsonParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const parse = (_request: FastifyRequest, body: string, done: (error: Error | null, value?: unknown) => void): void => {
    try {
      done(null, parseJsonText(body));
    } catch (error) {
      done(error as Error);
    }
  };
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, parse);
  app.addContentTypeParser(VENDOR_JSON, { parseAs: 'string' }, parse);
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const contentType = request.headers['content-type'];
    if (contentType === undefined || contentType === '') {
      parse(request, body as string, done);
      return;
    }
    done(unsupported(contentType));
  });
}

/**
 * Inside an encapsulated plugin: every body arrives as its raw text (an NDJSON body is split and
 * parsed line by line by the route). JSON-ish and NDJSON content types are accepted.
 */
export function installRawTextParser(instance: FastifyInstance): void {
  installRawParser(instance, 'string');
}

/**
 * Inside an encapsulated plugin: every body arrives as its raw bytes, a Buffer (`_bulk` splits it
 * into lines, and its document lines cross to their shards as they came). JSON-ish and NDJSON
 * content types are accepted.
 */
export function installRawBytesParser(instance: FastifyInstance): void {
  installRawParser(instance, 'buffer');
}

function installRawParser(instance: FastifyInstance, parseAs: 'string' | 'buffer'): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', { parseAs }, (request, body, done) => {
    const contentType = request.headers['content-type'];
    if (contentType !== undefined && contentType !== '' && !isJsonish(contentType)) {
      done(unsupported(contentType));
      return;
    }
    done(null, body);
  });
}

function isJsonish(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return JSON_TYPES.includes(essence) || VENDOR_JSON.test(essence);
}

function unsupported(contentType: string): ApiError {
  return new ApiError(
    'unsupported_media_type',
    `Content-Type header [${contentType}] is not supported; send application/json (application/x-ndjson for _bulk)`,
  );
}
