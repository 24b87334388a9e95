/**
 * The `_cat` response format shared by every `_cat` route, as Elasticsearch renders it: a plain
 * text table (`v` adds the header row, `h` picks columns, `s` sorts by columns with optional
 * `:asc`/`:desc`, `bytes` fixes the size unit, `help` lists the columns) or, with `format=json`,
 * an array of objects keyed by column name.
 */
import type { FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { ApiError } from './errors.ts';
import { FlagParam, flagSet } from './params.ts';

/** Units of the `bytes` parameter. */
export const BYTE_UNITS = ['b', 'kb', 'mb', 'gb', 'tb'] as const;

/** One unit of the `bytes` parameter. */
export type ByteUnit = (typeof BYTE_UNITS)[number];

/** Query-string parameters every `_cat` route accepts (spread into `querySchema`). */
export const CAT_QUERY = {
  v: Type.Optional(FlagParam),
  help: Type.Optional(FlagParam),
  h: Type.Optional(Type.String({ minLength: 1 })),
  s: Type.Optional(Type.String({ minLength: 1 })),
  format: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('json')])),
  bytes: Type.Optional(Type.Union(BYTE_UNITS.map((unit) => Type.Literal(unit)))),
};

const CatParams = Type.Object(CAT_QUERY);

/** The `_cat` parameters as parsed. */
export type CatParamsType = Static<typeof CatParams>;

/** One column of a `_cat` table over rows of type `Row`. */
export interface CatColumn<Row> {
  name: string;
  description: string;
  /** Numeric columns are right-aligned and sorted as numbers. */
  numeric: boolean;
  value: (row: Row, bytes: ByteUnit | undefined) => string;
}

/** A `_cat` table: its columns, the ones shown without `h`, and the sort without `s`. */
export interface CatTable<Row> {
  columns: readonly CatColumn<Row>[];
  defaultColumns: readonly string[];
  defaultSort: string;
}

/** Answers a `_cat` request over `rows` in the format the parameters ask for. */
export function sendCat<Row>(reply: FastifyReply, table: CatTable<Row>, rows: readonly Row[], query: CatParamsType): FastifyReply {
  if (flagSet(query.help)) {
    const lines = table.columns.map((column) => `${column.name.padEnd(22)}| ${column.description}`);
    return reply.type('text/plain; charset=utf-8').send(lines.join('\n') + '\n');
  }
  const columns = selectColumns(table, query.h);
  const cells = sortRows(table, rows, query.s).map((row) => columns.map((column) => column.value(row, query.bytes)));
  if (query.format === 'json') {
    return reply.send(cells.map((row) => Object.fromEntries(columns.map((column, index) => [column.name, row[index]]))));
  }
  return reply.type('text/plain; charset=utf-8').send(renderTable(columns, cells, flagSet(query.v)));
}

function selectColumns<Row>(table: CatTable<Row>, header: string | undefined): CatColumn<Row>[] {
  const names = header === undefined ? table.defaultColumns : header.split(',').map((name) => name.trim());
  return names.map((name) => {
    const column = table.columns.find((candidate) => candidate.name === name);
    if (!column) {
      throw new ApiError('invalid_parameter', `Unknown column [${name}] in [h]; known columns: ${table.columns.map((known) => known.name).join(', ')}`);
    }
    return column;
  });
}

function sortRows<Row>(table: CatTable<Row>, rows: readonly Row[], spec: string | undefined): Row[] {
  const keys = (spec ?? table.defaultSort).split(',').map((part) => {
    const [name, order] = part.trim().split(':');
    const column = table.columns.find((candidate) => candidate.name === name);
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

function renderTable<Row>(columns: CatColumn<Row>[], cells: string[][], header: boolean): string {
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
export function formatBytes(value: number, unit: ByteUnit | undefined): string {
  if (unit !== undefined) return String(Math.floor(value / 1024 ** BYTE_UNITS.indexOf(unit)));
  let scaled = value;
  let index = 0;
  while (scaled >= 1024 && index < BYTE_UNITS.length - 1) {
    scaled /= 1024;
    index++;
  }
  return index === 0 ? `${value}b` : `${Number(scaled.toFixed(1))}${BYTE_UNITS[index]}`;
}
