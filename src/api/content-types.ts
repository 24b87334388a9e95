/**
 * Request body parsers. JSON bodies are accepted as `application/json` and the vendor types ES
 * clients send (`application/vnd.opensearch+json`, `application/vnd.elasticsearch+json`, with
 * or without `compatible-with=N`); a body without a Content-Type is read as JSON too. Every
 * parser enforces `http.max_content_length` (413, checked against Content-Length before
 * reading) and the JSON nesting limit. Single-document writes also check `indexing.max_document_bytes`
 * on the bytes before parsing them. `_bulk` routes take the raw bytes instead, `_msearch` the raw text.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { oversizedDocument } from './document-size.ts';
import { ApiError } from './errors.ts';
import { parseJsonText } from './json-body.ts';

const JSON_TYPES = ['application/json', 'application/x-ndjson'];
const VENDOR_JSON = /^application\/vnd\.(opensearch|elasticsearch)\+(json|x-ndjson)\b/;

/** Replaces Fastify's default parsers with the JSON parsers described above. */
export function installJsonParsers(app: FastifyInstance): void {
  installParsers(app, 'string', (body) => remembered(parseJsonText(body as string), body as string));
}

/**
 * Inside an encapsulated plugin whose bodies are documents (`_doc`, `_create`, `_update`): the
 * JSON parsers above, reading the body as bytes and refusing one longer than `maxDocumentBytes()`
 * (400 `document_too_large`, document-size.ts) before parsing it.
 */
export function installDocumentParsers(instance: FastifyInstance, maxDocumentBytes: () => number): void {
  installParsers(instance, 'buffer', (body) => {
    const bytes = body as Buffer;
    const refused = oversizedDocument(bytes.length, maxDocumentBytes());
    if (refused) throw refused;
    const text = bytes.toString('utf8');
    return remembered(parseJsonText(text), text);
  });
}

/** The JSON text each parsed body was read from (see `receivedText`). */
const receivedTexts = new WeakMap<object, string>();

function remembered(value: unknown, text: string): unknown {
  if (typeof value === 'object' && value !== null) receivedTexts.set(value, text);
  return value;
}

/**
 * The text a JSON body arrived as, or undefined: a document's stored `_source` keeps it byte for
 * byte, and a search reads the digits of its `search_after` integers beyond 2^53 from it.
 */
export function receivedText(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null ? receivedTexts.get(body) : undefined;
}

/** JSON parsers that turn the body, read as `parseAs`, into its value with `parseBody`. */
function installParsers(instance: FastifyInstance, parseAs: 'string' | 'buffer', parseBody: (body: string | Buffer) => unknown): void {
  instance.removeAllContentTypeParsers();
  const parse = (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, value?: unknown) => void): void => {
    try {
      done(null, parseBody(body));
    } catch (error) {
      done(error as Error);
    }
  };
  instance.addContentTypeParser(JSON_TYPES, { parseAs }, parse);
  instance.addContentTypeParser(VENDOR_JSON, { parseAs }, parse);
  instance.addContentTypeParser('*', { parseAs }, (request, body, done) => {
    const contentType = request.headers['content-type'];
    if (contentType === undefined || contentType === '') {
      parse(request, body, done);
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
