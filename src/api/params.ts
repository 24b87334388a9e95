/**
 * Request parameter schemas shared by the route files (path parameters and the query-string
 * parameters of ES that several routes accept), and their translation into NodeService options.
 * Query strings are strict: an unknown parameter is a 400 naming it, as in Elasticsearch.
 */
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import type { SourceOptions } from '../node/node-service.ts';

/** ES's "boolean" query values: a bare `?flag`, `true` or `false`. */
export const FlagParam = Type.Union([Type.Literal(''), Type.Literal('true'), Type.Literal('false')]);

/** True for `?flag` and `?flag=true`. */
export function flagSet(value: string | undefined): boolean {
  return value === '' || value === 'true';
}

/** Parameters every route accepts (response formatting). */
export const COMMON_QUERY = {
  pretty: Type.Optional(FlagParam),
  human: Type.Optional(FlagParam),
  error_trace: Type.Optional(FlagParam),
  filter_path: Type.Optional(Type.String()),
};

/** A strict query-string schema: the common parameters plus `properties`. */
export function querySchema<T extends TProperties>(properties: T) {
  return Type.Object({ ...COMMON_QUERY, ...properties }, { additionalProperties: false });
}

const PatternList = Type.String({ minLength: 1 });

/** `_source`, `_source_includes`, `_source_excludes` of get-like requests. */
export const SOURCE_QUERY = {
  _source: Type.Optional(Type.String()),
  _source_includes: Type.Optional(PatternList),
  _source_excludes: Type.Optional(PatternList),
};

/** Write parameters accepted for compatibility: `refresh` is a no-op (writes are visible at once). */
export const WRITE_QUERY = {
  refresh: Type.Optional(Type.Union([FlagParam, Type.Literal('wait_for')])),
  routing: Type.Optional(Type.String({ minLength: 1 })),
  timeout: Type.Optional(Type.String()),
  wait_for_active_shards: Type.Optional(Type.String()),
};

/** What a write response adds for its `refresh` parameter: `forced_refresh: true` after `refresh=true` (as ES), else nothing. */
export function forcedRefreshField(refresh: string | undefined): { forced_refresh?: true } {
  return flagSet(refresh) ? { forced_refresh: true } : {};
}

/** Optimistic concurrency control. */
export const CONCURRENCY_QUERY = {
  if_seq_no: Type.Optional(Type.Integer({ minimum: 0 })),
  if_primary_term: Type.Optional(Type.Integer({ minimum: 1 })),
};

/** ES external versioning of index and delete (`version` with `version_type=external|external_gte`). */
export const VERSION_QUERY = {
  version: Type.Optional(Type.Integer({ minimum: 0 })),
  version_type: Type.Optional(Type.Union([Type.Literal('internal'), Type.Literal('external'), Type.Literal('external_gte')])),
};

/** `{collection}` path parameter (name rules are checked by the node). */
export const CollectionParams = Type.Object({ collection: Type.String({ minLength: 1 }) });

/** `{collection}/.../{id}` path parameters. */
export const DocumentParams = Type.Object({ collection: Type.String({ minLength: 1 }), id: Type.String({ minLength: 1 }) });

/** Typed `{collection}` params. */
export type CollectionParamsType = Static<typeof CollectionParams>;

/** Splits a comma list parameter into its non-empty parts. */
export function commaList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** The node's `_source` options from the query string, or undefined when none is given. */
export function sourceOptions(query: { _source?: string; _source_includes?: string; _source_excludes?: string }): SourceOptions | undefined {
  if (query._source === undefined && query._source_includes === undefined && query._source_excludes === undefined) return undefined;
  const options: SourceOptions = {};
  if (query._source !== undefined) options.source = query._source === '' ? true : query._source;
  const includes = commaList(query._source_includes);
  const excludes = commaList(query._source_excludes);
  if (includes) options.includes = includes;
  if (excludes) options.excludes = excludes;
  return options;
}

/** An object body whose fields are not constrained here (documents, DSL parts). */
export const AnyObject = Type.Object({}, { additionalProperties: true });

/** A body that may be absent (validated as null by Fastify) or must match `schema`. */
export function optionalBody<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}
