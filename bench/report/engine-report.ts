/** The engine suite's printed tables: figures per peer, ratios, and the targets met or missed. */
import type { ClassTiming, PeerReport } from '../peers/harness.ts';
import { QUERY_CLASSES, type QueryClass } from '../query-set.ts';
import { formatMegabytes, formatMs, formatRate, formatRatio } from './stats.ts';
import { renderTable, verdict } from './table.ts';

/** The peers of the engine suite, in table order. */
export const ENGINE_PEERS = ['trove', 'fts5', 'minisearch'] as const;

/** One engine-suite peer. */
export type EnginePeer = (typeof ENGINE_PEERS)[number];

/** Stands in for the runs of a peer left out with `--peers`. */
export const NOT_SELECTED = new Error('not selected with --peers');

/** The two runs of one peer: the full size with every class, a tenth of it with common terms. */
export interface PeerRuns {
  full: PeerReport | Error;
  small: PeerReport | Error;
}

/** Everything the engine suite measured. */
export interface EngineSuiteResult {
  docs: number;
  smallDocs: number;
  queriesPerClass: Record<QueryClass, number>;
  runs: Record<EnginePeer, PeerRuns>;
}

/** One row of the figures table: how to read the figure from a peer's runs and print it. */
interface Metric {
  label: string;
  value: (runs: PeerRuns) => number;
  format: (value: number) => string;
}

const PEER_TITLES: Record<EnginePeer, string> = { trove: 'Trove', fts5: 'FTS5', minisearch: 'minisearch' };

function full(runs: PeerRuns): PeerReport | null {
  return runs.full instanceof Error ? null : runs.full;
}

function timing(report: PeerReport | null, queryClass: QueryClass): ClassTiming | null {
  return report?.classes[queryClass] ?? null;
}

/** Common-term p50 at the full size divided by the p50 at a tenth of it. */
function growth(runs: PeerRuns): number {
  const small = runs.small instanceof Error ? null : runs.small;
  return (timing(full(runs), 'common')?.p50Ms ?? Number.NaN) / (timing(small, 'common')?.p50Ms ?? Number.NaN);
}

function metrics(smallDocs: number): Metric[] {
  const seconds = (report: PeerReport | null): number => (report ? report.indexMs / 1000 : Number.NaN);
  const rows: Metric[] = [
    { label: 'indexing docs/s', value: (runs) => (full(runs)?.docs ?? Number.NaN) / seconds(full(runs)), format: (value) => formatRate(value, '') },
    { label: 'indexing MB/s (JSON source)', value: (runs) => (full(runs)?.sourceBytes ?? Number.NaN) / 1e6 / seconds(full(runs)), format: (value) => formatRate(value, '') },
    { label: 'merge to 1 segment / optimize', value: (runs) => full(runs)?.optimizeMs ?? Number.NaN, format: formatMs },
    { label: 'on disk', value: (runs) => full(runs)?.diskBytes ?? Number.NaN, format: formatMegabytes },
    { label: 'RSS after load', value: (runs) => full(runs)?.rssBytes ?? Number.NaN, format: formatMegabytes },
    { label: 'peak RSS (load and merge)', value: (runs) => full(runs)?.peakRssBytes ?? Number.NaN, format: formatMegabytes },
    { label: 'reopen (close, open, 1st query)', value: (runs) => full(runs)?.reopenMs ?? Number.NaN, format: formatMs },
  ];
  for (const queryClass of QUERY_CLASSES) {
    rows.push({ label: `p50 ${queryClass}`, value: (runs) => timing(full(runs), queryClass)?.p50Ms ?? Number.NaN, format: formatMs });
    rows.push({ label: `p99 ${queryClass}`, value: (runs) => timing(full(runs), queryClass)?.p99Ms ?? Number.NaN, format: formatMs });
  }
  rows.push({
    label: `p50 common at ${smallDocs.toLocaleString('en-US')} docs`,
    value: (runs) => timing(runs.small instanceof Error ? null : runs.small, 'common')?.p50Ms ?? Number.NaN,
    format: formatMs,
  });
  rows.push({ label: 'common p50 growth for 10× docs', value: growth, format: formatRatio });
  return rows;
}

function figuresTable(result: EngineSuiteResult): string {
  const header = ['metric', 'Trove', 'FTS5', 'Trove/FTS5', 'minisearch', 'Trove/minisearch'];
  const rows = metrics(result.smallDocs).map((metric) => {
    const trove = metric.value(result.runs.trove);
    const fts5 = metric.value(result.runs.fts5);
    const minisearch = metric.value(result.runs.minisearch);
    return [metric.label, metric.format(trove), metric.format(fts5), formatRatio(trove / fts5), metric.format(minisearch), formatRatio(trove / minisearch)];
  });
  return renderTable(header, rows);
}

function targetsTable(result: EngineSuiteResult): string {
  const trove = full(result.runs.trove);
  const fts5 = full(result.runs.fts5);
  const minisearch = full(result.runs.minisearch);
  const p50 = (report: PeerReport | null, queryClass: QueryClass): number => timing(report, queryClass)?.p50Ms ?? Number.NaN;
  const check = (ratio: number, limit: number, atLeast = false): [string, string] => [
    formatRatio(ratio),
    verdict(Number.isFinite(ratio) ? (atLeast ? ratio >= limit : ratio <= limit) : null),
  ];
  const docsPerSecond = (report: PeerReport | null): number => (report ? report.docs / report.indexMs : Number.NaN);
  const rows: string[][] = [
    ['indexing docs/s >= 2x FTS5', ...check(docsPerSecond(trove) / docsPerSecond(fts5), 2, true)],
    ['p50 common <= 0.15x FTS5', ...check(p50(trove, 'common') / p50(fts5, 'common'), 0.15)],
    ['p50 or <= 0.15x FTS5', ...check(p50(trove, 'or') / p50(fts5, 'or'), 0.15)],
    ['p50 phrase <= 0.3x FTS5', ...check(p50(trove, 'phrase') / p50(fts5, 'phrase'), 0.3)],
    ['p50 and <= 0.3x FTS5', ...check(p50(trove, 'and') / p50(fts5, 'and'), 0.3)],
    ['p50 rare <= 1x FTS5', ...check(p50(trove, 'rare') / p50(fts5, 'rare'), 1)],
  ];
  for (const queryClass of QUERY_CLASSES) {
    const ratio = p50(trove, queryClass) / p50(minisearch, queryClass);
    rows.push([`p50 ${queryClass} below minisearch`, formatRatio(ratio), verdict(Number.isFinite(ratio) ? ratio < 1 : null)]);
  }
  rows.push(['common p50 growth < 3x for 10x docs', ...check(growth(result.runs.trove), 3)]);
  rows.push(['on disk <= FTS5', ...check((trove?.diskBytes ?? Number.NaN) / (fts5?.diskBytes ?? Number.NaN), 1)]);
  rows.push(['RSS after load <= 1.5x FTS5', ...check((trove?.rssBytes ?? Number.NaN) / (fts5?.rssBytes ?? Number.NaN), 1.5)]);
  rows.push(['reopen <= 2x FTS5', ...check((trove?.reopenMs ?? Number.NaN) / (fts5?.reopenMs ?? Number.NaN), 2)]);
  rows.push(['merge to 1 segment <= 2x FTS5 optimize', ...check((trove?.optimizeMs ?? Number.NaN) / (fts5?.optimizeMs ?? Number.NaN), 2)]);
  return renderTable(['target (Trove vs peer)', 'Trove/peer', 'status'], rows);
}

function notes(result: EngineSuiteResult): string[] {
  const lines: string[] = [];
  for (const peer of ENGINE_PEERS) {
    const runs = result.runs[peer];
    for (const [size, run] of [['full', runs.full], ['small', runs.small]] as const) {
      if (run instanceof Error && run !== NOT_SELECTED) lines.push(`${PEER_TITLES[peer]} (${size} run) failed: ${run.message}`);
    }
    const report = full(runs);
    if (!report) continue;
    const counts = QUERY_CLASSES.map((queryClass) => {
      const classTiming = report.classes[queryClass];
      if (!classTiming) return `${queryClass} n/a`;
      const capped = classTiming.queries < result.queriesPerClass[queryClass] ? ' (time budget)' : '';
      return `${queryClass} ${classTiming.queries}${capped}, ${classTiming.zeroHits} empty`;
    });
    lines.push(`${PEER_TITLES[peer]}: queries ${report.layer}; baseline RSS ${formatMegabytes(report.baselineRssBytes)}.`);
    lines.push(`  queries timed per class: ${counts.join('; ')}`);
  }
  return lines;
}

/** The full printed report of the engine suite. */
export function renderEngineReport(result: EngineSuiteResult): string {
  const trove = full(result.runs.trove) ?? full(result.runs.fts5);
  const sourceMb = trove ? formatMegabytes(trove.sourceBytes) : 'n/a';
  return [
    `Engine suite: e-mails, ${result.docs.toLocaleString('en-US')} docs (${sourceMb} of JSON), in process, one run, same machine`,
    '',
    figuresTable(result),
    '',
    targetsTable(result),
    '',
    ...notes(result),
  ].join('\n');
}
