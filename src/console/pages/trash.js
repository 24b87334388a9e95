/**
 * Trash page: items grouped by namespace with their snapshot summary and time left; verify (the
 * findings per shard), restore (a collection item optionally under a new name), delete one item,
 * and empty the trash after a confirmation that names every item lost.
 */
import { api, segment } from '../api.js';
import { el, errorNotice, labelled, replace, table } from '../elements.js';
import { formatBytes, formatCount, formatDuration, formatTime } from '../format.js';
import { confirmAction } from '../dialogs.js';

const REFRESH_MS = 5000;

/** An item's one-line description for confirmations. */
function describe(item) {
  const summary = item.summary ?? {};
  return `${item.kind} ${item.name} (namespace ${item.namespace}): ${formatCount(summary.documents)} documents, ${formatBytes(summary.bytes)}, ${summary.collections ?? 1} collection(s)`;
}

/** The verify findings: a summary line and one row per shard. */
function findingsView(answer) {
  const summary = answer.summary ?? {};
  return el(
    'div',
    { class: 'findings', 'data-complete': String(answer.complete) },
    el('p', {}, el('strong', { text: answer.complete ? 'Complete: every shard is present and intact.' : 'Incomplete: a restore would be refused.' }), ` ${summary.ok ?? 0} of ${summary.shards ?? 0} shards ok; missing ${summary.missing ?? 0}, damaged ${summary.damaged ?? 0}, count mismatch ${summary.document_count_mismatch ?? 0}, node unavailable ${summary.node_unavailable ?? 0}.`),
    table(
      [
        { label: 'Collection', cell: (shard) => shard.collection },
        { label: 'Shard', numeric: true, cell: (shard) => String(shard.shard) },
        { label: 'Node', cell: (shard) => shard.node_name ?? shard.node_id ?? '–' },
        { label: 'Status', cell: (shard) => el('span', { class: `badge status-${shard.status === 'ok' ? 'green' : shard.status === 'unassigned' ? 'yellow' : 'red'}`, text: shard.status }) },
        { label: 'Documents (expected / found)', numeric: true, cell: (shard) => `${formatCount(shard.expected_documents)} / ${formatCount(shard.found_documents)}` },
        { label: 'Files checked', numeric: true, cell: (shard) => formatCount(shard.files_checked) },
        { label: 'Problems', cell: (shard) => (shard.problems ?? []).join('; ') },
      ],
      answer.shards ?? [],
    ),
  );
}

/** The trash page. */
export async function renderTrash(root, page) {
  const { session } = page;
  const canManage = session.can('manage');
  const canEmpty = session.can('admin') && session.unrestricted;
  const header = el('div', { 'data-section': 'trash-summary' });
  const listBox = el('div', { 'data-section': 'trash-items' });
  const empty = el('button', { type: 'button', class: 'danger', text: 'Empty the trash', disabled: !canEmpty, title: canEmpty ? null : 'Needs an admin key for every namespace.' });
  root.append(header, el('div', { class: 'actions' }, empty), listBox);
  let items = [];
  const openFindings = new Map();

  const act = (task) => () => task().catch((error) => page.reportError(error));

  const itemView = (item) => {
    const findingsBox = el('div');
    if (openFindings.has(item.item_id)) findingsBox.append(openFindings.get(item.item_id));
    const rename = item.kind === 'collection' ? el('input', { name: 'rename_to', placeholder: item.name, autocomplete: 'off', size: 18 }) : null;
    const denied = canManage ? null : session.denial('manage');
    const verify = async () => {
      const answer = await api.post(`/_cluster/trash/${segment(item.item_id)}/_verify`, undefined, { signal: page.signal });
      const view = findingsView(answer);
      openFindings.set(item.item_id, view);
      replace(findingsBox, view);
    };
    const restore = async () => {
      const renameTo = rename?.value.trim();
      const body = renameTo ? { rename_to: renameTo } : undefined;
      try {
        const answer = await api.post(`/_cluster/trash/${segment(item.item_id)}/_restore`, body, { signal: page.signal });
        page.announce(`Restored ${answer.kind} ${answer.collections?.join(', ') ?? item.name}.`);
        openFindings.delete(item.item_id);
        await refresh();
      } catch (error) {
        if (error?.body?.error?.findings) replace(findingsBox, errorNotice(error), findingsView({ complete: false, summary: error.body.error.summary, shards: error.body.error.findings }));
        else replace(findingsBox, errorNotice(error));
      }
    };
    const purge = async () => {
      const confirmed = await confirmAction({ title: `Delete ${item.kind} ${item.name} for good?`, message: 'This removes it from the trash on every node. It cannot be restored afterwards.', items: [describe(item)], confirmLabel: 'Delete for good' });
      if (!confirmed) return;
      await api.delete(`/_cluster/trash/${segment(item.item_id)}`, { signal: page.signal });
      page.announce(`Deleted ${item.name} from the trash.`);
      await refresh();
    };
    const summary = item.summary ?? {};
    const busy = item.state !== 'trashed';
    return el(
      'li',
      { class: 'panel', 'data-item': item.item_id, 'data-name': item.name },
      el('h3', {}, `${item.kind === 'namespace' ? 'Namespace' : 'Collection'} ${item.name}`, busy ? el('span', { class: 'badge status-yellow', text: item.state }) : null),
      el('p', { class: 'muted' }, `item `, el('code', { text: item.item_id }), ` · deleted ${formatTime(item.deleted_at)} · expires ${formatTime(item.expires_at)} (`, el('strong', { text: `${formatDuration(item.expires_at_millis - Date.now())} left` }), ')'),
      el('p', { text: `${formatCount(summary.collections)} collection(s), ${formatCount(summary.shards)} shards, ${formatCount(summary.documents)} documents, ${formatBytes(summary.bytes)}, ${formatCount(summary.segments)} segments` + (item.collections?.length > 1 ? `: ${item.collections.map((collection) => collection.name).join(', ')}` : '') }),
      el(
        'div',
        { class: 'row' },
        el('button', { type: 'button', text: 'Verify', disabled: !canManage || busy, title: denied, 'aria-label': `Verify ${item.name}`, on: { click: act(verify) } }),
        rename ? labelled('Restore as (optional new name)', rename) : null,
        el('button', { type: 'button', class: 'primary', text: 'Restore', disabled: !canManage || busy, title: denied, 'aria-label': `Restore ${item.name}`, on: { click: act(restore) } }),
        el('button', { type: 'button', class: 'danger', text: 'Delete for good', disabled: !canManage || busy, title: denied, 'aria-label': `Delete ${item.name} for good`, on: { click: act(purge) } }),
      ),
      findingsBox,
    );
  };

  const refresh = async () => {
    const answer = await api.get('/_cluster/trash', { signal: page.signal });
    const groups = Object.entries(answer.namespaces ?? {});
    items = groups.flatMap(([, group]) => group.items);
    const failures = answer._nodes?.failures ?? [];
    replace(
      header,
      el('p', {}, `${answer.total_items} item${answer.total_items === 1 ? '' : 's'}; each is kept ${formatDuration(answer.retention_secs * 1000)} after its delete (trash.retention_secs).`),
      failures.length > 0 ? errorNotice(new Error(`Nodes that did not answer: ${failures.map((failure) => `${failure.node_name}: ${failure.reason}`).join('; ')}`)) : null,
      (answer.unreadable ?? []).length > 0 ? errorNotice(new Error(`Unreadable items (they can be purged): ${answer.unreadable.map((entry) => entry.item_id ?? JSON.stringify(entry)).join(', ')}`)) : null,
    );
    empty.disabled = !canEmpty || items.length === 0;
    const typed = new Map([...listBox.querySelectorAll('input[name="rename_to"]')].map((input) => [input.closest('[data-item]').dataset.item, input.value]));
    replace(
      listBox,
      groups.length === 0
        ? el('p', { class: 'muted', text: 'The trash is empty.' })
        : groups.map(([namespace, group]) => el('section', { 'data-namespace': namespace }, el('h2', { text: `Namespace ${namespace}` }), el('ul', { class: 'hits' }, group.items.map(itemView)))),
    );
    for (const [itemId, value] of typed) {
      const input = listBox.querySelector(`[data-item="${CSS.escape(itemId)}"] input[name="rename_to"]`);
      if (input) input.value = value;
    }
  };

  empty.addEventListener(
    'click',
    act(async () => {
      const confirmed = await confirmAction({ title: 'Empty the trash?', message: `Every item below is removed on every node and can no longer be restored (${items.length} item${items.length === 1 ? '' : 's'}):`, items: items.map(describe), confirmLabel: 'Empty the trash' });
      if (!confirmed) return;
      const answer = await api.delete('/_cluster/trash', { signal: page.signal });
      page.announce(`Emptied the trash: ${answer.purged.length} purged${answer.skipped.length > 0 ? `, ${answer.skipped.length} skipped (busy)` : ''}.`);
      openFindings.clear();
      await refresh();
    }),
  );
  await refresh();
  page.every(REFRESH_MS, async () => {
    // No refresh while the user types a new name or reads a dialog.
    if (document.activeElement?.name === 'rename_to' || document.querySelector('dialog[open]')) return;
    await refresh();
  });
}
