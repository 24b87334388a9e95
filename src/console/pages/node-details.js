/**
 * One node's details on the cluster page: its host warnings, charts of `cpu.steal_percent` and of
 * the indexing and search rates, a few process figures, and every host fact (the facts a warning
 * is about are highlighted). Stats are polled; rates are the change between two samples.
 */
import { api, segment } from '../api.js';
import { card, el, replace, table } from '../elements.js';
import { formatBytes, formatDecimal, formatDuration } from '../format.js';
import { timeChart } from '../charts.js';

const STATS_INTERVAL_MS = 5000;
/** Rate samples kept for the chart (10 minutes at one sample per 5 s). */
const RATE_SAMPLES = 120;

/** Which host fact each warning `check` is about (paths under `host`). */
const WARNING_FACTS = {
  file_descriptors: 'resources.file_descriptors',
  max_map_count: 'resources.memory_maps',
  transparent_hugepages: 'transparent_hugepages',
  swap_in_use: 'resources.swap',
  overcommit_memory: 'resources.overcommit_memory',
  zone_reclaim_mode: 'numa.zone_reclaim_mode',
  cpu_throttling: 'resources.cgroup.cpu_throttling_recent',
  conntrack_fill: 'resources.conntrack',
  somaxconn: 'resources.tcp.net.core.somaxconn',
  data_path_atime: 'data_disk.mount',
  rotational_disk: 'data_disk.device',
};

/** True for a host fact: `{value}` or `{value: null, error}`. */
function isFact(node) {
  return node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, 'value');
}

/** A fact's value as one line of text. */
function factText(value) {
  if (value === null || value === undefined) return '–';
  if (Array.isArray(value)) return value.map(factText).join('; ');
  if (typeof value !== 'object') return String(value);
  if (isFact(value)) return value.value === null ? `(${value.error})` : factText(value.value);
  return Object.entries(value)
    .map(([key, inner]) => `${key}: ${inner !== null && typeof inner === 'object' ? (isFact(inner) ? factText(inner) : JSON.stringify(inner)) : inner}`)
    .join(', ');
}

/** Every fact of the `host` object as `{path, fact}` rows. */
function factRows(host, prefix = '') {
  const rows = [];
  for (const [key, node] of Object.entries(host ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isFact(node)) rows.push({ path, fact: node });
    else if (node !== null && typeof node === 'object') rows.push(...factRows(node, path));
    else rows.push({ path, fact: { value: node } });
  }
  return rows;
}

/**
 * Renders the node's details into `container` and keeps its stats current. Returns `{stop()}`.
 */
export async function renderNodeDetails(container, page, nodeId) {
  const info = await api.get(`/_node/${segment(nodeId)}`, { signal: page.signal });
  const warned = new Map((info.warnings ?? []).map((warning) => [WARNING_FACTS[warning.check] ?? warning.check, warning]));
  const warningList =
    (info.warnings ?? []).length === 0
      ? el('p', { class: 'muted', text: 'No host warnings.' })
      : el(
          'div',
          { class: 'warnings', role: 'region', 'aria-label': 'Host warnings' },
          el('strong', { text: `${info.warnings.length} host warning${info.warnings.length === 1 ? '' : 's'}` }),
          el('ul', {}, info.warnings.map((warning) => el('li', {}, el('code', { text: warning.check }), ` ${warning.message} (seen ${factText(warning.value)}, recommended ${factText(warning.recommended)})`))),
        );
  const figures = el('div', { class: 'cards' });
  const charts = el('div', { class: 'charts' });
  const facts = factRows(info.host);
  replace(
    container,
    el('h2', { text: `Node ${info.name}` }),
    el('p', { class: 'muted' }, `id `, el('code', { text: info.node_id }), ` · version ${info.version} · roles ${(info.roles ?? []).join(', ')} · ${info.addresses?.http ?? ''} · Node.js ${info.process?.node_version ?? '–'}`),
    warningList,
    el('h3', { text: 'Load' }),
    figures,
    charts,
    el('h3', { text: 'Host facts' }),
    table(
      [
        { label: 'Fact', cell: (row) => row.path },
        {
          label: 'Value',
          cell: (row) => {
            const warning = [...warned.entries()].find(([path]) => row.path === path || row.path.startsWith(`${path}.`))?.[1];
            const text = row.fact.value === null && row.fact.error ? el('span', { class: 'muted', text: `unreadable: ${row.fact.error}` }) : factText(row.fact.value);
            return warning ? [text, el('div', { class: 'hint' }, el('strong', { text: 'Warning: ' }), warning.message)] : text;
          },
        },
      ],
      facts,
      { rowClass: (row) => ([...warned.keys()].some((path) => row.path === path || row.path.startsWith(`${path}.`)) ? 'warning-row facts' : 'facts') },
    ),
  );

  const steal = timeChart(charts, { title: 'CPU steal %', series: ['steal %'], unit: '%' });
  const rates = timeChart(charts, { title: 'Indexing and search rates', series: ['documents indexed /s', 'searches /s'], unit: 'per second' });
  const samples = [];
  const times = [];
  const indexRates = [];
  const searchRates = [];

  const poll = async () => {
    const stats = await api.get(`/_node/${segment(nodeId)}/stats`, { signal: page.signal });
    const stealPercent = stats.cpu?.steal_percent;
    const trend = stealPercent?.trend ?? [];
    steal.update(trend.map((sample) => sample.t), trend.map((sample) => sample.value));
    const sample = { t: stats.timestamp, indexed: stats.indexing.index_total, searched: stats.search.query_total };
    const previous = samples.at(-1);
    samples.push(sample);
    if (previous !== undefined && sample.t > previous.t) {
      const seconds = (sample.t - previous.t) / 1000;
      times.push(sample.t);
      indexRates.push(Math.max(0, sample.indexed - previous.indexed) / seconds);
      searchRates.push(Math.max(0, sample.searched - previous.searched) / seconds);
      if (times.length > RATE_SAMPLES) for (const series of [times, indexRates, searchRates]) series.shift();
      rates.update(times, indexRates, searchRates);
    }
    if (samples.length > 2) samples.shift();
    replace(
      figures,
      card('Steal now / 1m / 5m', stealPercent && stealPercent.current !== null ? `${formatDecimal(stealPercent.current)} / ${formatDecimal(stealPercent.avg_1m)} / ${formatDecimal(stealPercent.avg_5m)} %` : `unreadable`),
      card('Documents indexed', stats.indexing.index_total),
      card('Searches', stats.search.query_total),
      card('RSS', formatBytes(stats.process.rss_bytes)),
      card('Heap used', formatBytes(stats.process.heap_used_bytes)),
      card('Event loop p99', `${formatDecimal(stats.process.event_loop_lag?.p99_ms)} ms`),
      card('Load 1m', formatDecimal(stats.os.load_average?.['1m'])),
      card('Uptime', formatDuration(stats.process.uptime_secs * 1000)),
    );
  };
  await poll();
  let stopped = false;
  const timer = setInterval(() => {
    if (!stopped && page.active) poll().catch((error) => page.reportError(error));
  }, STATS_INTERVAL_MS);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      steal.destroy();
      rates.destroy();
    },
  };
}
