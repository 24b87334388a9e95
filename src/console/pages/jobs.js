/**
 * Compaction and jobs page: start a compaction of a collection (one row per hosting node comes
 * back at once) and follow every job of the cluster with its progress.
 */
import { api, segment, withQuery } from '../api.js';
import { el, errorNotice, labelled, replace, table } from '../elements.js';
import { formatBytes, formatDuration, formatTime } from '../format.js';

/** Refresh interval while a job is queued or running, and otherwise. */
const BUSY_REFRESH_MS = 1000;
const IDLE_REFRESH_MS = 5000;

/** States shown as badges in the colours of health. */
const STATE_COLOURS = { done: 'green', running: 'yellow', queued: 'yellow', failed: 'red' };

/** A job's passes as a progress bar and `done/total`. */
function progress(job) {
  const passes = job.passes ?? { done: 0, total: 0, failed: 0 };
  const finished = passes.done + (passes.failed ?? 0);
  return el('span', {}, el('progress', { max: Math.max(passes.total, 1), value: finished, 'aria-label': `Passes of job ${job.job_id}` }), ` ${finished}/${passes.total}`);
}

/** The compaction and jobs page. */
export async function renderJobs(root, page) {
  const { session } = page;
  const canCompact = session.can('manage');
  const collection = el('select', { name: 'collection' });
  const compact = el('button', { type: 'submit', class: 'primary', text: 'Compact', disabled: !canCompact, title: canCompact ? null : session.denial('manage') });
  const startedBox = el('div', { 'data-section': 'compaction-rows' });
  const jobsBox = el('div', { 'data-section': 'jobs' });
  const stateFilter = el('select', { name: 'state' }, ['', 'queued', 'running', 'done', 'failed'].map((state) => el('option', { value: state, text: state === '' ? 'any' : state })));

  const collections = await api.get(withQuery('/_cat/indices', { format: 'json', h: 'index', s: 'index' }), { signal: page.signal });
  replace(collection, collections.map((row) => el('option', { value: row.index, text: row.index })));

  const start = async () => {
    const answer = await api.post(`/${segment(collection.value)}/_compact`, undefined, { signal: page.signal });
    replace(
      startedBox,
      el('h2', { text: `Compaction of ${answer.collection}` }),
      table(
        [
          { label: 'Node', cell: (row) => `${row.node_name} (${row.node_id})` },
          { label: 'Status', cell: (row) => el('span', { class: `badge status-${row.status === 'failed' ? 'red' : 'green'}`, text: row.status }) },
          { label: 'Job', cell: (row) => (row.job_id ? el('code', { text: row.job_id }) : '–') },
          { label: 'Primary passes', numeric: true, cell: (row) => String(row.primary_passes ?? '–') },
          { label: 'Error', cell: (row) => (row.error ? `${row.error.type}: ${row.error.reason}` : '') },
        ],
        answer.nodes,
      ),
    );
    page.announce(`Compaction of ${answer.collection} queued on ${answer.nodes.length} node${answer.nodes.length === 1 ? '' : 's'}.`);
    await refresh();
  };

  let busy = false;
  const refresh = async () => {
    const answer = await api.get(withQuery('/_jobs', { state: stateFilter.value || undefined }), { signal: page.signal });
    busy = answer.jobs.some((job) => job.state === 'queued' || job.state === 'running');
    const failures = answer._nodes?.failures ?? [];
    replace(
      jobsBox,
      failures.length > 0 ? errorNotice(new Error(`Nodes that did not answer: ${failures.map((failure) => `${failure.node_name ?? failure.node_id}: ${failure.reason}`).join('; ')}`)) : null,
      table(
        [
          { label: 'Job', cell: (job) => el('code', { text: job.job_id }) },
          { label: 'Collection', cell: (job) => job.collection },
          { label: 'Node', cell: (job) => job.node_name },
          { label: 'State', cell: (job) => el('span', { class: `badge status-${STATE_COLOURS[job.state] ?? 'yellow'}`, text: job.state }) },
          { label: 'Passes', cell: progress },
          { label: 'Segments', cell: (job) => (job.segments ? `${job.segments.before} → ${job.segments.after}` : '–') },
          { label: 'Bytes', cell: (job) => (job.bytes ? `${formatBytes(job.bytes.before)} → ${formatBytes(job.bytes.after)}` : '–') },
          { label: 'Deleted purged', numeric: true, cell: (job) => String(job.deleted_docs_purged ?? '–') },
          { label: 'Started', cell: (job) => formatTime(job.started_at ?? job.created_at) },
          { label: 'Took', cell: (job) => formatDuration(job.took_ms) },
          { label: 'Error', cell: (job) => (job.error ? `${job.error.type}: ${job.error.reason}` : '') },
        ],
        answer.jobs,
        { empty: 'No jobs yet.' },
      ),
    );
  };

  const compactForm = el(
    'form',
    {
      class: 'panel',
      'aria-label': 'Start a compaction',
      on: {
        submit: (event) => {
          event.preventDefault();
          start().catch((error) => page.reportError(error));
        },
      },
    },
    el('p', { class: 'hint', text: 'A compaction merges every primary shard of the collection down to one segment and purges deleted documents; searches and writes go on meanwhile.' }),
    el('div', { class: 'row' }, labelled('Collection', collection), compact),
    canCompact ? null : el('p', { class: 'muted', text: `Starting a compaction: ${session.denial('manage')}` }),
  );
  stateFilter.addEventListener('change', () => refresh().catch((error) => page.reportError(error)));
  root.append(compactForm, startedBox, el('h2', { text: 'Jobs' }), el('div', { class: 'row' }, labelled('State', stateFilter)), jobsBox);
  if (collections.length === 0) compact.disabled = true;
  await refresh();
  let last = Date.now();
  page.every(BUSY_REFRESH_MS, async () => {
    if (!busy && Date.now() - last < IDLE_REFRESH_MS) return;
    last = Date.now();
    await refresh();
  });
}
