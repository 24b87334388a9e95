/**
 * A collection's copies across the nodes, for the collections page: the shard map (a row per
 * shard with its primary term, a column per node of the registry, each cell the copy that node
 * holds: primary or replica, its state, whether it is in sync; copies on no node in a column of
 * their own) and the collection's last replica recoveries (method, source → target, bytes, time).
 * Node ids are shown by the names the registry gives them.
 */
import { el, table } from '../elements.js';
import { formatBytes, formatCount, formatDuration, formatTime } from '../format.js';

/** A node's name in the registry, or its id when the registry does not list it. */
function nodeName(nodes, nodeId) {
  return nodes?.[nodeId]?.name ?? nodeId;
}

/** Every copy of a shard with its role and whether it is in the in-sync set. */
function copiesOf(shard) {
  const inSync = new Set(shard.in_sync ?? []);
  const copies = [];
  if (shard.primary) copies.push({ role: 'primary', ...shard.primary });
  for (const replica of shard.replicas ?? []) copies.push({ role: 'replica', ...replica });
  return copies.map((copy) => ({ ...copy, inSync: copy.node !== null && copy.node !== undefined && inSync.has(copy.node) }));
}

/** One copy: its role, a badge for its state and, when it is on a node, one saying whether it is in sync. */
function copyLabel(copy, where) {
  const placed = copy.node !== null && copy.node !== undefined;
  return el(
    'span',
    { class: 'copy', 'data-copy': copy.role, 'data-state': copy.state, 'data-in-sync': placed ? String(copy.inSync) : null },
    el('strong', { text: copy.role }),
    ' ',
    el('span', { class: `badge status-${copy.state}`, text: copy.state }),
    placed ? ' ' : null,
    placed
      ? el('span', {
          class: `badge ${copy.inSync ? 'status-in-sync' : 'status-not-in-sync'}`,
          text: copy.inSync ? 'in sync' : 'not in sync',
          title: copy.inSync ? 'This copy holds every acknowledged write' : 'This copy may lack acknowledged writes (recovering, or dropped from the in-sync set)',
        })
      : null,
    where ? ` ${where}` : null,
  );
}

/** The shard map of `collection` from `_cluster/state/nodes,shards`. */
export function shardMap(collection, state) {
  const shards = Object.entries(state.shards?.[collection] ?? {}).sort(([left], [right]) => Number(left) - Number(right));
  const nodes = Object.entries(state.nodes ?? {}).sort(([, left], [, right]) => String(left.name).localeCompare(String(right.name)));
  const known = (copy) => copy.node !== null && copy.node !== undefined && state.nodes?.[copy.node] !== undefined;
  const onNode = (shard, nodeId) => copiesOf(shard).filter((copy) => copy.node === nodeId).map((copy) => copyLabel(copy));
  const elsewhere = (shard) =>
    copiesOf(shard)
      .filter((copy) => !known(copy))
      .map((copy) => copyLabel(copy, copy.node ? `on ${copy.node}, not in the registry` : ''));
  return table(
    [
      { label: 'Shard', cell: ([number]) => number },
      { label: 'Primary term', numeric: true, cell: ([, shard]) => formatCount(shard.primary_term) },
      ...nodes.map(([nodeId, node]) => ({ label: node.name ?? nodeId, cell: ([, shard]) => onNode(shard, nodeId) })),
      { label: 'Unassigned', cell: ([, shard]) => elsewhere(shard) },
      { label: 'UUID', cell: ([, shard]) => el('code', { text: shard.uuid }) },
    ],
    shards,
    { caption: `Shard map of ${collection}`, empty: `No shards of ${collection} in the routing table.` },
  );
}

/** The recoveries of `collection` from `GET /{collection}/_recovery`, node ids shown by name. */
export function recoveryTable(collection, answer, nodes) {
  const rows = answer?.[collection]?.shards ?? [];
  const failures = answer?._nodes?.failures ?? [];
  return [
    table(
      [
        { label: 'Shard', cell: (row) => row.id },
        { label: 'Method', cell: (row) => row.method },
        { label: 'Source → target', cell: (row) => `${nodeName(nodes, row.source?.id)} → ${nodeName(nodes, row.target?.id)}` },
        { label: 'Files', numeric: true, cell: (row) => formatCount(row.index?.files?.recovered) },
        { label: 'File bytes', numeric: true, cell: (row) => formatBytes(row.index?.size?.recovered_in_bytes) },
        { label: 'Operations', numeric: true, cell: (row) => formatCount(row.translog?.recovered) },
        { label: 'Operation bytes', numeric: true, cell: (row) => formatBytes(row.translog?.recovered_in_bytes) },
        { label: 'Took', numeric: true, cell: (row) => formatDuration(row.total_time_in_millis) },
        { label: 'Finished', cell: (row) => formatTime(row.stop_time_in_millis) },
      ],
      rows,
      { caption: `Last recoveries of the replicas of ${collection}`, empty: 'No replica of this collection recovered since its nodes started.' },
    ),
    failures.length > 0
      ? el('p', { class: 'muted', text: `Not answering, so their recoveries are missing: ${failures.map((failure) => `${nodeName(nodes, failure.node_id)} (${failure.reason})`).join('; ')}` })
      : null,
  ];
}
