/**
 * `GET /_cat/collections[/{target}]` (alias `/_cat/indices`): the collection list as a plain-text
 * table like Elasticsearch's `_cat/indices` (`v` adds the header row, `h` picks columns, `s` sorts,
 * `bytes` fixes the size unit, `help` lists the columns) or as JSON with `format=json`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { matchesWildcard } from '../../cluster/names.ts';
import type { CollectionSummary } from '../../node/node-service.ts';
import { ApiError } from '../errors.ts';
import type { RouteOptions } from '../server.ts';
import { FlagParam, flagSet, querySchema } from '../params.ts';

const BYTE_UNITS = ['b', 'kb', 'mb', 'gb', 'tb'] as const;
type ByteUnit = (typeof BYTE_UNITS)[number];

const CatQuery = querySchema({
  v: Type.Optional(FlagParam),
  help: Type.Optional(FlagParam),
  h: Type.Optional(Type.String({ minLength: 1 })),
  s: Type.Optional(Type.String({ minLength: 1 })),
  format: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('json')])),
  bytes: Type.Optional(Type.Union(BYTE_UNITS.map((unit) => Type.Literal(unit)))),
  health: Type.Optional(Type.Union([Type.Literal('green'), Type.Literal('yellow'), Type.Literal('red')])),
  pri: Type.Optional(FlagParam),
});

type CatQueryType = Static<typeof CatQuery>;

interface Column {
  name: string;
  description: string;
  numeric: boolean;
  value: (row: CollectionSummary, bytes: ByteUnit | undefined) => string;
}

const COLUMNS: readonly Column[] = [
  { name: 'health', description: 'current health status', numeric: false, value: (row) => row.health },
  { name: 'status', description: 'open/close status', numeric: false, value: (row) => row.status },
  { name: 'index', description: 'collection name', numeric: false, value: (row) => row.name },
  { name: 'uuid', description: 'collection uuid', numeric: false, value: (row) => row.uuid },
  { name: 'pri', description: 'number of primary shards', numeric: true, value: (row) => String(row.primaries) },
  { name: 'rep', description: 'number of replica shards', numeric: true, value: (row) => String(row.replicas) },
  { name: 'docs.count', description: 'available docs', numeric: true, value: (row) => String(row.docsCount) },
  { name: 'docs.deleted', description: 'deleted docs', numeric: true, value: (row) => String(row.docsDeleted) },
  { name: 'store.size', description: 'store size of primaries and replicas', numeric: true, value: (row, bytes) => formatBytes(row.storeSizeBytes, bytes) },
  { name: 'pri.store.size', description: 'store size of primaries', numeric: true, value: (row, bytes) => formatBytes(row.storeSizeBytes, bytes) },
  { name: 'namespace', description: 'namespace of the collection', numeric: false, value: (row) => row.namespace },
  { name: 'creation.date', description: 'creation time, epoch millis', numeric: true, value: (row) => String(row.createdAt) },
  { name: 'creation.date.string', description: 'creation time, ISO 8601', numeric: false, value: (row) => new Date(row.createdAt).toISOString() },
];

const DEFAULT_COLUMNS = ['health', 'status', 'index', 'uuid', 'pri', 'rep', 'docs.count', 'docs.deleted', 'store.size', 'pri.store.size'];

/** `_cat` routes. */
export async function catRoutes(instance: FastifyInstance, options: RouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { node } = options;

  const handle = async (target: string | undefined, query: CatQueryType, reply: FastifyReply) => {
    if (flagSet(query.help)) {
      const lines = COLUMNS.map((column) => `${column.name.padEnd(22)}| ${column.description}`);
      return reply.type('text/plain; charset=utf-8').send(lines.join('\n') + '\n');
    }
    const columns = selectColumns(query.h);
    let rows = await node.listCollections();
    if (target !== undefined && target !== '_all' && target !== '*') {
      const patterns = target.split(',').map((part) => part.trim()).filter((part) => part !== '');
      rows = rows.filter((row) => patterns.some((pattern) => matchesWildcard(pattern, row.name)));
    }
    if (query.health !== undefined) rows = rows.filter((row) => row.health === query.health);
    const cells = sortRows(rows, query.s).map((row) => columns.map((column) => column.value(row, query.bytes)));
    if (query.format === 'json') {
      return reply.send(cells.map((row) => Object.fromEntries(columns.map((column, index) => [column.name, row[index]]))));
    }
    return reply.type('text/plain; charset=utf-8').send(renderTable(columns, cells, flagSet(query.v)));
  };

  for (const url of ['/_cat/collections', '/_cat/indices']) {
    app.get(url, { config: { role: 'monitor' }, schema: { querystring: CatQuery } }, async (request, reply) =>
      handle(undefined, request.query, reply),
    );
    app.get(
      `${url}/:target`,
      { config: { role: 'monitor' }, schema: { params: Type.Object({ target: Type.String({ minLength: 1 }) }), querystring: CatQuery } },
      async (request, reply) => handle(request.params.target, request.query, reply),
    );
  }
}

function selectColumns(header: string | undefined): Column[] {
  if (header === undefined) return DEFAULT_COLUMNS.map((name) => COLUMNS.find((column) => column.name === name)!);
  return header.split(',').map((name) => {
    const column = COLUMNS.find((candidate) => candidate.name === name.trim());
    if (!column) {
      throw new ApiError('invalid_parameter', `Unknown column [${name.trim()}] in [h]; known columns: ${COLUMNS.map((known) => known.name).join(', ')}`);
    }
    return column;
  });
}

function sortRows(rows: CollectionSummary[], spec: string | undefined): CollectionSummary[] {
  const keys = (spec ?? 'index').split(',').map((part) => {
    const [name, order] = part.trim().split(':');
    const column = COLUMNS.find((candidate) => candidate.name === name);
    if (!column) throw new ApiError('invalid_parameter', `Unknown column [${name}] in [s]`);
    if (order !== undefined && order !== 'asc' && order !== 'desc') {
      throw new ApiError('invalid_parameter', `Unknown sort order [${order}] in [s], expected asc or desc`);
    }
    return { column, direction: order === 'desc' ? -1 : 1 };
  });
  return [...rows].sort((left, right) => {
    for (const { column, direction } of keys) {
      const a = column.value(left, 'b');
      const b = column.value(right, 'b');
      const compared = column.numeric ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0;
      if (compared !== 0) return compared * direction;
    }
    return 0;
  });
}

function renderTable(columns: Column[], cells: string[][], header: boolean): string {
  const rows = header ? [columns.map((column) => column.name), ...cells] : cells;
  const widths = columns.map((_, index) => Math.max(0, ...rows.map((row) => row[index]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, index) => (columns[index]!.numeric ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!)))
        .join(' ')
        .trimEnd(),
    )
    .map((line) => line + '\n')
    .join('');
}

/** Human-readable size like ES (`4.2kb`), or a whole number of the requested unit. */
function formatBytes(value: number, unit: ByteUnit | undefined): string {
  if (unit !== undefined) return String(Math.floor(value / 1024 ** BYTE_UNITS.indexOf(unit)));
  let scaled = value;
  let index = 0;
  while (scaled >= 1024 && index < BYTE_UNITS.length - 1) {
    scaled /= 1024;
    index++;
  }
  return index === 0 ? `${value}b` : `${Number(scaled.toFixed(1))}${BYTE_UNITS[index]}`;
}
