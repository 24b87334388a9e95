/** The HTTP suite's printed table: server figures beside the in-process engine figures. */
import type { HttpSuiteResult } from '../http.ts';
import type { LoadResult } from '../http/bulk-load.ts';
import type { DriveResult, MixTiming } from '../http/drive.ts';
import { MIX_KINDS } from '../http/query-mix.ts';
import { formatMegabytes, formatMs, formatRate, formatRatio } from './stats.ts';
import { renderTable } from './table.ts';

/** A figure of one side, or NaN when that side failed or lacks it. */
type Side = { loads: Record<string, LoadResult>; compaction: number | string; mix: DriveResult } | null;

interface Row {
  label: string;
  value: (side: Side) => number;
  format: (value: number) => string;
}

function loadRows(collection: string): Row[] {
  const load = (side: Side): LoadResult | undefined => side?.loads[collection];
  return [
    { label: `${collection}: load docs/s`, value: (side) => (load(side) ? (load(side)!.docs / load(side)!.ms) * 1000 : Number.NaN), format: (value) => formatRate(value, '') },
    { label: `${collection}: load MB/s`, value: (side) => (load(side) ? load(side)!.sourceBytes / 1e3 / load(side)!.ms : Number.NaN), format: (value) => formatRate(value, '') },
  ];
}

function latencyRows(label: string, timing: (mix: DriveResult) => MixTiming): Row[] {
  return [
    { label: `p50 ${label}`, value: (side) => (side ? timing(side.mix).p50Ms : Number.NaN), format: formatMs },
    { label: `p99 ${label}`, value: (side) => (side ? timing(side.mix).p99Ms : Number.NaN), format: formatMs },
  ];
}

function rows(): Row[] {
  return [
    ...loadRows('emails'),
    ...loadRows('cities'),
    { label: 'compaction to 1 segment', value: (side) => (typeof side?.compaction === 'number' ? side.compaction : Number.NaN), format: formatMs },
    { label: 'queries/s', value: (side) => side?.mix.queriesPerSecond ?? Number.NaN, format: (value) => formatRate(value, '') },
    ...latencyRows('all', (mix) => mix.overall),
    ...MIX_KINDS.flatMap((kind) => latencyRows(kind, (mix) => mix.perKind[kind])),
  ];
}

function notes(result: HttpSuiteResult, server: Side, inProcess: Side): string[] {
  const lines: string[] = [];
  if (result.server instanceof Error) lines.push(`server run failed: ${result.server.message}`);
  if (result.inProcess instanceof Error) lines.push(`in-process run failed: ${result.inProcess.message}`);
  for (const [name, side] of [['server', server], ['in process', inProcess]] as const) {
    if (!side) continue;
    for (const [collection, load] of Object.entries(side.loads)) {
      lines.push(`${name}: ${collection} ${load.docs.toLocaleString('en-US')} docs, ${formatMegabytes(load.sourceBytes)} of JSON source${load.failedItems ? `, ${load.failedItems} failed items (${load.firstFailure})` : ''}`);
    }
    if (typeof side.compaction === 'string') lines.push(`${name}: compaction not run: ${side.compaction}`);
    lines.push(`${name}: ${side.mix.overall.queries} queries timed in ${(side.mix.durationMs / 1000).toFixed(1)} s by ${side.mix.concurrency} caller(s), ${side.mix.overall.errors} errors${side.mix.firstError ? ` (first: ${side.mix.firstError})` : ''}`);
  }
  return lines;
}

/** The full printed report of the HTTP suite. */
export function renderHttpReport(result: HttpSuiteResult): string {
  const server: Side = result.server instanceof Error ? null : result.server;
  const inProcess: Side = result.inProcess instanceof Error ? null : result.inProcess;
  const table = renderTable(
    ['metric', 'HTTP (server)', 'in process', 'HTTP/in-process'],
    rows().map((row) => {
      const overHttp = row.value(server);
      const local = row.value(inProcess);
      return [row.label, row.format(overHttp), row.format(local), formatRatio(overHttp / local)];
    }),
  );
  const { options } = result;
  return [
    `HTTP suite: one node, e-mails + cities via _bulk (${options.bulkConcurrency} requests in flight), query mix with ${options.clients} clients for ${options.durationMs / 1000} s`,
    'in process: same documents via Shard.writeBatch (same batches in flight), same mix via searcher.query + fetch, one caller',
    '',
    table,
    '',
    ...notes(result, server, inProcess),
  ].join('\n');
}
