/** The HTTP suite's printed table: server figures beside the in-process engine figures. */
import type { HttpSuiteResult } from '../http.ts';
import type { LoadResult } from '../http/bulk-load.ts';
import type { DriveResult, MixTiming } from '../http/drive.ts';
import { MIX_KINDS } from '../http/query-mix.ts';
import { formatMegabytes, formatMs, formatRate, formatRatio } from './stats.ts';
import { renderTable } from './table.ts';

/** One column of the table; a null part does not apply to the column, an absent column failed. */
interface Column {
  loads: Record<string, LoadResult> | null;
  compaction: number | string | null;
  mix: DriveResult | null;
}

/** One row: its label and how to read it from a column (null: not applicable, NaN: unavailable). */
interface Row {
  label: string;
  value: (column: Column | undefined) => number | null;
  format: (value: number) => string;
}

function loadRows(collection: string): Row[] {
  const load = (column: Column | undefined): LoadResult | null | undefined =>
    column?.loads === null ? null : column?.loads[collection];
  const figure = (column: Column | undefined, of: (result: LoadResult) => number): number | null => {
    const result = load(column);
    if (result === null) return null;
    return result ? of(result) : Number.NaN;
  };
  return [
    { label: `${collection}: load docs/s`, value: (column) => figure(column, (result) => (result.docs / result.ms) * 1000), format: (value) => formatRate(value, '') },
    { label: `${collection}: load MB/s`, value: (column) => figure(column, (result) => result.sourceBytes / 1e3 / result.ms), format: (value) => formatRate(value, '') },
  ];
}

function mixFigure(column: Column | undefined, of: (mix: DriveResult) => number): number | null {
  if (column?.mix === null) return null;
  return column ? of(column.mix) : Number.NaN;
}

function latencyRows(label: string, timing: (mix: DriveResult) => MixTiming): Row[] {
  return [
    { label: `p50 ${label}`, value: (column) => mixFigure(column, (mix) => timing(mix).p50Ms), format: formatMs },
    { label: `p99 ${label}`, value: (column) => mixFigure(column, (mix) => timing(mix).p99Ms), format: formatMs },
  ];
}

function rows(): Row[] {
  return [
    ...loadRows('emails'),
    ...loadRows('cities'),
    {
      label: 'compaction to 1 segment',
      value: (column) => (column?.compaction === null ? null : typeof column?.compaction === 'number' ? column.compaction : Number.NaN),
      format: formatMs,
    },
    { label: 'queries/s', value: (column) => mixFigure(column, (mix) => mix.queriesPerSecond), format: (value) => formatRate(value, '') },
    ...latencyRows('all', (mix) => mix.overall),
    ...MIX_KINDS.flatMap((kind) => latencyRows(kind, (mix) => mix.perKind[kind])),
  ];
}

function describeMix(name: string, mix: DriveResult): string {
  const errors = `${mix.overall.errors} errors${mix.firstError ? ` (first: ${mix.firstError})` : ''}`;
  return `${name}: ${mix.overall.queries} queries timed in ${(mix.durationMs / 1000).toFixed(1)} s by ${mix.concurrency} caller(s), ${errors}`;
}

function notes(result: HttpSuiteResult): string[] {
  const lines: string[] = [];
  if (result.server instanceof Error) lines.push(`server run failed: ${result.server.message}`);
  if (result.inProcess instanceof Error) lines.push(`in-process run failed: ${result.inProcess.message}`);
  for (const [name, side] of [['server', result.server], ['in process', result.inProcess]] as const) {
    if (side instanceof Error) continue;
    for (const [collection, load] of Object.entries(side.loads)) {
      const failures = load.failedItems ? `, ${load.failedItems} failed items (${load.firstFailure})` : '';
      lines.push(`${name}: ${collection} ${load.docs.toLocaleString('en-US')} docs, ${formatMegabytes(load.sourceBytes)} of JSON source${failures}`);
    }
    if (typeof side.compaction === 'string') lines.push(`${name}: compaction not run: ${side.compaction}`);
    lines.push(describeMix(name, side.mix));
    if ('singleClientMix' in side) lines.push(describeMix(name, side.singleClientMix));
  }
  return lines;
}

function cell(row: Row, column: Column | undefined): string {
  const value = row.value(column);
  return value === null ? '' : row.format(value);
}

/** The full printed report of the HTTP suite. */
export function renderHttpReport(result: HttpSuiteResult): string {
  const { options } = result;
  const server = result.server instanceof Error ? undefined : result.server;
  const concurrent: Column | undefined = server && { loads: server.loads, compaction: server.compaction, mix: server.mix };
  const single: Column | undefined = server && { loads: null, compaction: null, mix: server.singleClientMix };
  const inProcess: Column | undefined = result.inProcess instanceof Error ? undefined : result.inProcess;
  const table = renderTable(
    ['metric', `HTTP, ${options.clients} clients`, 'HTTP, 1 client', 'in process', 'HTTP/in-process'],
    rows().map((row) => {
      const singleValue = row.value(single);
      const overHttp = singleValue === null ? row.value(concurrent) : singleValue;
      const local = row.value(inProcess);
      const ratio = overHttp === null || local === null ? Number.NaN : overHttp / local;
      return [row.label, cell(row, concurrent), cell(row, single), cell(row, inProcess), formatRatio(ratio)];
    }),
  );
  return [
    `HTTP suite: one node; e-mails + cities via _bulk (${options.bulkConcurrency} requests in flight); query mix for ${options.durationMs / 1000} s with ${options.clients} clients, then with 1`,
    'in process: same documents via Shard.writeBatch (same batches in flight), same mix via searcher.query + fetch, one caller',
    'HTTP/in-process compares like with like: loads with the same batches in flight, queries with one caller each',
    '',
    table,
    '',
    ...notes(result),
  ].join('\n');
}
