/**
 * Collections page, by namespace: documents, size, shards; for the collection shown, where each
 * shard's copies live and the last replica recoveries (shard-map.js, redrawn every few seconds)
 * and the mapping; create a collection or a namespace; delete a collection (it moves to the
 * trash, as the confirmation says).
 */
import { api, segment, withQuery } from '../api.js';
import { el, errorNotice, jsonBlock, labelled, replace, statusBadge, table } from '../elements.js';
import { formatCount, formatDuration } from '../format.js';
import { confirmAction } from '../dialogs.js';
import { recoveryTable, shardMap } from './shard-map.js';

const CAT_COLUMNS = 'index,namespace,health,status,pri,rep,docs.count,docs.deleted,store.size,uuid';
/** How often the shown collection's shard map and recoveries are read again. */
const REPLICATION_REFRESH_MS = 5000;

/** The collections page. */
export async function renderCollections(root, page) {
  const { session } = page;
  const canManage = session.can('manage');
  const listBox = el('div', { 'data-section': 'collections' });
  const detailBox = el('div', { 'data-section': 'collection-detail' });
  const formsBox = el('div');
  root.append(formsBox, listBox, detailBox);

  let state = { nodes: {}, namespaces: {}, shards: {}, collections: {} };

  /** The collection whose detail is shown, and the parts of it that are redrawn. */
  let shown = null;
  const mapBox = el('div', { 'data-section': 'shard-map' });
  const recoveriesBox = el('div', { 'data-section': 'recoveries' });

  /** Reads `name`'s recoveries and draws them (after the shard map, from `state`). */
  const drawReplication = async (name) => {
    replace(mapBox, shardMap(name, state));
    try {
      const recoveries = await api.get(`/${segment(name)}/_recovery`, { signal: page.signal });
      if (shown === name) replace(recoveriesBox, recoveryTable(name, recoveries, state.nodes));
    } catch (error) {
      if (error?.name !== 'AbortError' && shown === name) replace(recoveriesBox, errorNotice(error));
    }
  };

  const showDetail = (name) => {
    const collection = state.collections?.[name];
    if (collection === undefined) return;
    shown = name;
    replace(mapBox);
    replace(recoveriesBox, el('p', { class: 'muted', text: 'Loading the recoveries…' }));
    replace(
      detailBox,
      el('h2', { id: 'detail-title', text: `Collection ${name}` }),
      el('p', { class: 'muted', text: `namespace ${collection.namespace} · uuid ${collection.uuid} · ${collection.settings?.number_of_shards} shards, ${collection.settings?.number_of_replicas} replicas` }),
      el('h3', { text: 'Shard map' }),
      mapBox,
      el('h3', { text: 'Recoveries' }),
      recoveriesBox,
      el('h3', { text: 'Mapping' }),
      jsonBlock(collection.mappings ?? {}),
    );
    detailBox.querySelector('h2').setAttribute('tabindex', '-1');
    detailBox.querySelector('h2').focus();
    drawReplication(name).catch((error) => page.reportError(error));
  };

  /** Reads the routing table again and redraws the shown collection's shard map and recoveries. */
  const refreshReplication = async () => {
    if (shown === null) return;
    const name = shown;
    const fresh = await api.get('/_cluster/state/nodes,shards', { signal: page.signal });
    state = { ...state, nodes: fresh.nodes, shards: fresh.shards };
    if (shown !== name) return;
    if (state.shards?.[name] === undefined) {
      shown = null;
      replace(detailBox);
      return;
    }
    await drawReplication(name);
  };

  const remove = async (name) => {
    const trash = await api.get('/_cluster/trash', { signal: page.signal }).catch(() => null);
    const retention = trash ? ` It stays restorable from the Trash page for ${formatDuration(trash.retention_secs * 1000)}.` : '';
    const confirmed = await confirmAction({
      title: `Delete collection ${name}?`,
      message: `The collection moves to the trash with its documents, mapping and change feed; its name is free at once.${retention}`,
      confirmLabel: 'Move to trash',
    });
    if (!confirmed) return;
    const answer = await api.delete(`/${segment(name)}`, { signal: page.signal });
    page.announce(`Moved ${name} to the trash (item ${answer.trash_items?.[0]?.item_id ?? '?'}).`);
    if (shown === name) {
      shown = null;
      replace(detailBox);
    }
    await refresh();
  };

  const refresh = async () => {
    const [rows, clusterState] = await Promise.all([
      api.get(withQuery('/_cat/indices', { format: 'json', h: CAT_COLUMNS, s: 'index' }), { signal: page.signal }),
      api.get('/_cluster/state/nodes,namespaces,collections,shards', { signal: page.signal }),
    ]);
    state = clusterState;
    const byNamespace = new Map(Object.keys(state.namespaces ?? {}).map((namespace) => [namespace, []]));
    for (const row of rows) {
      if (!byNamespace.has(row.namespace)) byNamespace.set(row.namespace, []);
      byNamespace.get(row.namespace).push(row);
    }
    const sections = [...byNamespace.entries()].map(([namespace, collections]) =>
      el(
        'section',
        { 'data-namespace': namespace },
        el('h2', { text: `Namespace ${namespace}` }),
        table(
          [
            { label: 'Collection', cell: (row) => el('button', { type: 'button', text: row.index, 'aria-label': `Show collection ${row.index}`, on: { click: () => showDetail(row.index) } }) },
            { label: 'Health', cell: (row) => statusBadge(row.health) },
            { label: 'Documents', numeric: true, cell: (row) => formatCount(row['docs.count']) },
            { label: 'Deleted', numeric: true, cell: (row) => formatCount(row['docs.deleted']) },
            { label: 'Size', numeric: true, cell: (row) => row['store.size'] },
            { label: 'Shards', numeric: true, cell: (row) => row.pri },
            { label: 'Replicas', numeric: true, cell: (row) => row.rep },
            {
              label: 'Actions',
              cell: (row) =>
                el('button', {
                  type: 'button',
                  class: 'danger',
                  text: 'Delete',
                  'aria-label': `Delete collection ${row.index}`,
                  disabled: !canManage,
                  title: canManage ? null : session.denial('manage'),
                  on: { click: () => remove(row.index).catch((error) => page.reportError(error)) },
                }),
            },
          ],
          collections,
          { empty: 'No collections in this namespace.' },
        ),
      ),
    );
    replace(listBox, sections);
    return state;
  };

  const name = el('input', { name: 'name', required: true, autocomplete: 'off' });
  const namespace = el('select', { name: 'namespace' });
  const shards = el('input', { name: 'shards', type: 'number', min: 1, max: 1024, value: '1' });
  const mapping = el('textarea', { name: 'mapping', rows: 4, spellcheck: 'false', placeholder: '{"properties": {"title": {"type": "text"}}}' });
  const createError = el('div');
  const namespaceName = el('input', { name: 'namespace-name', required: true, autocomplete: 'off' });
  const create = async () => {
    replace(createError);
    let mappings;
    try {
      mappings = mapping.value.trim() === '' ? undefined : JSON.parse(mapping.value);
    } catch (error) {
      replace(createError, errorNotice(new Error(`The mapping is not valid JSON: ${error.message}`)));
      return;
    }
    const body = { namespace: namespace.value, settings: { number_of_shards: Number(shards.value) }, mappings };
    await api.put(`/${segment(name.value.trim())}`, body, { signal: page.signal });
    page.announce(`Created collection ${name.value.trim()}.`);
    name.value = '';
    await refresh().then(fillNamespaces);
  };
  const createNamespace = async () => {
    await api.put(`/_namespace/${segment(namespaceName.value.trim())}`, undefined, { signal: page.signal });
    page.announce(`Created namespace ${namespaceName.value.trim()}.`);
    namespaceName.value = '';
    await refresh().then(fillNamespaces);
  };
  const fillNamespaces = () => {
    const chosen = namespace.value;
    replace(namespace, Object.keys(state.namespaces ?? {}).map((ns) => el('option', { value: ns, text: ns, selected: ns === (chosen || 'default') })));
  };
  const guard = (task) => (event) => {
    event.preventDefault();
    task().catch((error) => (error?.name === 'AbortError' ? null : replace(createError, errorNotice(error))));
  };
  if (canManage) {
    formsBox.append(
      el(
        'details',
        { class: 'panel' },
        el('summary', { text: 'Create a collection or a namespace' }),
        el('form', { 'aria-label': 'Create a collection', on: { submit: guard(create) } }, el('div', { class: 'row' }, labelled('Name', name), labelled('Namespace', namespace), labelled('Shards', shards)), labelled('Mapping (JSON, optional)', mapping), el('button', { type: 'submit', class: 'primary', text: 'Create collection' })),
        el('form', { 'aria-label': 'Create a namespace', on: { submit: guard(createNamespace) } }, el('div', { class: 'row' }, labelled('New namespace', namespaceName), el('button', { type: 'submit', text: 'Create namespace' }))),
        createError,
      ),
    );
  } else {
    formsBox.append(el('p', { class: 'muted', text: `Creating and deleting collections: ${session.denial('manage')}` }));
  }
  await refresh();
  fillNamespaces();
  page.every(REPLICATION_REFRESH_MS, refreshReplication);
}
