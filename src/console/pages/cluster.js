/**
 * Cluster page: health at the chosen `level`, the nodes of the registry (name, id, roles, master,
 * address), and the details of one node (node-details.js). Refreshes every few seconds.
 */
import { api, withQuery } from '../api.js';
import { card, el, labelled, replace, statusBadge, table } from '../elements.js';
import { formatCount, formatTime } from '../format.js';
import { renderNodeDetails } from './node-details.js';

const REFRESH_MS = 5000;
const LEVELS = ['cluster', 'namespaces', 'collections', 'shards'];

/** Health cards: status, counts and whether the node reaches the coordinator. */
function healthCards(health) {
  const coordinator = health.coordinator;
  return el(
    'div',
    { class: 'cards' },
    el('div', { class: 'card' }, el('div', { class: 'label', text: 'Status' }), el('div', { class: 'value' }, statusBadge(health.status))),
    card('Nodes', health.number_of_nodes),
    card('Namespaces', health.number_of_namespaces),
    card('Collections', health.number_of_collections),
    card('Active primary shards', health.active_primary_shards),
    card('Active shards', health.active_shards),
    card('Unassigned shards', health.unassigned_shards, health.unassigned_shards > 0 ? 'status-red' : ''),
    card('Active shards %', `${health.active_shards_percent_as_number}%`),
    coordinator ? card('Coordinator', coordinator.available ? 'reachable' : `unreachable: ${coordinator.reason}`, coordinator.available ? '' : 'status-red') : null,
  );
}

/** The nested health detail (namespaces, collections, shards) as one table of rows. */
function healthDetail(health) {
  const rows = [];
  for (const [namespace, nsHealth] of Object.entries(health.namespaces ?? {})) {
    rows.push({ name: namespace, kind: 'namespace', ...nsHealth });
    for (const [collection, collectionHealth] of Object.entries(nsHealth.collections ?? {})) {
      rows.push({ name: `${namespace} / ${collection}`, kind: 'collection', ...collectionHealth });
      for (const [shard, shardHealth] of Object.entries(collectionHealth.shards ?? {})) {
        rows.push({ name: `${namespace} / ${collection} / shard ${shard}`, kind: 'shard', ...shardHealth });
      }
    }
  }
  if (rows.length === 0) return null;
  return table(
    [
      { label: 'Namespace / collection / shard', cell: (row) => row.name },
      { label: 'Kind', cell: (row) => row.kind },
      { label: 'Status', cell: (row) => statusBadge(row.status) },
      { label: 'Active primaries', numeric: true, cell: (row) => formatCount(row.active_primary_shards ?? (row.primary_active ? 1 : 0)) },
      { label: 'Active', numeric: true, cell: (row) => formatCount(row.active_shards) },
      { label: 'Initializing', numeric: true, cell: (row) => formatCount(row.initializing_shards) },
      { label: 'Unassigned', numeric: true, cell: (row) => formatCount(row.unassigned_shards) },
    ],
    rows,
    { caption: 'Health detail' },
  );
}

/** The cluster page. */
export async function renderCluster(root, page) {
  const level = el('select', { name: 'level' }, LEVELS.map((name) => el('option', { value: name, text: name })));
  const healthBox = el('div', { 'data-section': 'health' });
  const nodesBox = el('div', { 'data-section': 'nodes' });
  const detailsBox = el('div', { 'data-section': 'node-details' });
  root.append(
    el('section', { 'aria-labelledby': 'health-title' }, el('h2', { id: 'health-title', text: 'Health' }), el('div', { class: 'row' }, labelled('Detail level', level)), healthBox),
    el('section', { 'aria-labelledby': 'nodes-title' }, el('h2', { id: 'nodes-title', text: 'Nodes' }), nodesBox),
    detailsBox,
  );

  let selectedNode = null;
  let details = null;
  const selectNode = async (nodeId) => {
    if (nodeId === selectedNode) return;
    selectedNode = nodeId;
    details?.stop();
    details = await renderNodeDetails(detailsBox, page, nodeId);
  };

  const refresh = async () => {
    const [health, state] = await Promise.all([
      api.get(withQuery('/_cluster/health', { level: level.value }), { signal: page.signal }),
      api.get('/_cluster/state/nodes,master', { signal: page.signal }),
    ]);
    replace(healthBox, healthCards(health), healthDetail(health));
    const masterId = state.master?.node_id;
    const nodes = Object.entries(state.nodes ?? {}).map(([id, node]) => ({ id, ...node }));
    replace(
      nodesBox,
      table(
        [
          { label: 'Name', cell: (node) => node.name },
          { label: 'Id', cell: (node) => el('code', { text: node.id }) },
          { label: 'Roles', cell: (node) => (node.roles ?? []).join(', ') },
          { label: 'Master', cell: (node) => (node.id === masterId ? el('span', { class: 'badge status-green', text: 'master' }) : '') },
          { label: 'Address', cell: (node) => el('code', { text: node.address ?? '–' }) },
          { label: 'Started', cell: (node) => formatTime(node.started_at) },
          {
            label: 'Details',
            cell: (node) =>
              el('button', {
                type: 'button',
                text: node.id === selectedNode ? 'Shown below' : 'Show',
                'aria-pressed': node.id === selectedNode ? 'true' : 'false',
                'aria-label': `Show node ${node.name}`,
                on: { click: () => page.redraw(() => selectNode(node.id).then(refresh)).catch((error) => page.reportError(error)) },
              }),
          },
        ],
        nodes,
      ),
    );
    return nodes;
  };

  level.addEventListener('change', () => refresh().catch((error) => page.reportError(error)));
  await refresh();
  const local = await api.get('/_node/_local', { signal: page.signal });
  await selectNode(local.node_id);
  await refresh();
  page.every(REFRESH_MS, refresh);
  page.onLeave(() => details?.stop());
}
