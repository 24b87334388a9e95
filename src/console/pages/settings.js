/**
 * Node settings page: every setting of the chosen node with its value and source (`default`,
 * `file`, `env`, `flag`, `transient`); the dynamic keys can be edited (all changes in one `PUT`,
 * applied all or nothing) and a transient override reset to the configured value (`null`).
 * `log.level` shows its directives: the default level and each target's.
 */
import { api, segment } from '../api.js';
import { el, errorNotice, replace, table } from '../elements.js';

/**
 * The dynamic keys (docs/api.md, PUT /_node/_local/settings). The settings answer does not say
 * which keys are dynamic, so the console carries the list.
 */
const DYNAMIC_KEYS = [
  /^log\.level$/,
  /^node\.search\.slow_threshold_ms$/,
  /^search\.default_timeout_ms$/,
  /^search\.lanes\.[^.]+\.(max_concurrent|max_queue)$/,
  /^trash\.retention_secs$/,
  /^changes\.retention_secs$/,
  /^epoch\.(interval_ms|max_docs|max_bytes)$/,
  /^merge\.(enabled|segments_per_tier|max_segment_bytes)$/,
];

/** Log targets a `log.level` directive may name. */
const LOG_TARGETS = 'http, engine, catalog, jobs, trash, security, settings, slowlog, stats';

/** True when `key` can change at runtime. */
function isDynamic(key) {
  return DYNAMIC_KEYS.some((pattern) => pattern.test(key));
}

/** The directives of a `log.level` value: the default level and `target=level` pairs. */
function directives(value) {
  const parts = String(value).split(',').map((part) => part.trim()).filter(Boolean);
  const defaultLevel = parts.find((part) => !part.includes('=')) ?? '(configured)';
  const targets = parts.filter((part) => part.includes('='));
  return el('div', { class: 'hint' }, `default ${defaultLevel}`, targets.length > 0 ? `; targets: ${targets.join(', ')}` : '; no target directives', `. A bare level changes only the default; target=level sets one target (${LOG_TARGETS}).`);
}

/** The input for a setting, typed by its current value. */
function inputFor(key, value) {
  const label = `New value of ${key}`;
  if (typeof value === 'boolean') {
    return el('select', { name: key, 'aria-label': label }, ['true', 'false'].map((option) => el('option', { value: option, text: option, selected: String(value) === option })));
  }
  if (typeof value === 'number') return el('input', { name: key, type: 'number', value: String(value), 'aria-label': label, step: 'any' });
  return el('input', { name: key, type: 'text', value: String(value ?? ''), 'aria-label': label, size: 28, spellcheck: 'false' });
}

/** The value an input holds, typed like the setting's current value. */
function inputValue(input, current) {
  if (typeof current === 'boolean') return input.value === 'true';
  if (typeof current === 'number') return Number(input.value);
  return input.value;
}

/** The settings page. */
export async function renderSettings(root, page) {
  const { session } = page;
  const canEdit = session.can('admin') && session.unrestricted;
  const state = await api.get('/_cluster/state/nodes', { signal: page.signal });
  const local = await api.get('/_node/_local', { signal: page.signal });
  const node = el('select', { name: 'node' }, Object.entries(state.nodes ?? {}).map(([id, info]) => el('option', { value: id, text: `${info.name} (${id})`, selected: id === local.node_id })));
  const nodeLabel = el('label', { for: 'settings-node', text: 'Node' });
  node.id = 'settings-node';
  const tableBox = el('div', { 'data-section': 'settings' });
  const messageBox = el('div');
  const save = el('button', { type: 'submit', class: 'primary', text: 'Apply changes', disabled: !canEdit });
  const form = el('form', { 'aria-label': 'Node settings' }, tableBox);
  root.append(
    el('div', { class: 'row' }, el('div', {}, nodeLabel, node)),
    canEdit ? el('p', { class: 'hint', text: 'Changes are transient: they apply at once, without a restart, and a restart goes back to the configuration. Reset removes an override.' }) : el('p', { class: 'muted', text: `Changing settings: ${session.can('admin') ? 'needs an admin key for every namespace.' : session.denial('admin')}` }),
    messageBox,
    form,
  );
  let current = { settings: {}, sources: {} };

  const apply = async (changes) => {
    replace(messageBox);
    try {
      const answer = await api.put(`/_node/${segment(node.value)}/settings`, changes, { signal: page.signal });
      page.announce(`Applied: ${Object.entries(answer.changed ?? {}).map(([key, value]) => `${key} = ${JSON.stringify(value)}`).join(', ') || 'no change'}.`);
      await load();
    } catch (error) {
      if (error?.name !== 'AbortError') replace(messageBox, errorNotice(error));
    }
  };

  const load = async () => {
    current = await api.get(`/_node/${segment(node.value)}/settings`, { signal: page.signal });
    const rows = Object.keys(current.settings).sort().map((key) => ({ key, value: current.settings[key], source: current.sources?.[key] ?? 'default' }));
    const valueCell = (row) => [el('span', { 'data-value': row.key, text: JSON.stringify(row.value) }), row.key === 'log.level' ? directives(row.value) : null];
    const sourceCell = (row) => el('span', { class: row.source === 'transient' ? 'badge status-yellow' : 'muted', text: row.source });
    replace(
      tableBox,
      el('h2', { text: 'Dynamic settings' }),
      table(
        [
          { label: 'Setting', cell: (row) => el('code', { text: row.key }) },
          { label: 'Value', cell: valueCell },
          { label: 'Source', cell: sourceCell },
          { label: 'New value', cell: (row) => inputFor(row.key, row.value) },
          {
            label: 'Reset',
            cell: (row) =>
              row.source === 'transient'
                ? el('button', { type: 'button', text: 'Reset', 'aria-label': `Reset ${row.key} to the configured value`, disabled: !canEdit, on: { click: () => apply({ [row.key]: null }) } })
                : '',
          },
        ],
        rows.filter((row) => isDynamic(row.key)),
      ),
      el('div', { class: 'actions' }, save),
      el('h2', { text: 'Static settings (a restart applies a change)' }),
      table(
        [
          { label: 'Setting', cell: (row) => el('code', { text: row.key }) },
          { label: 'Value', cell: valueCell },
          { label: 'Source', cell: sourceCell },
        ],
        rows.filter((row) => !isDynamic(row.key)),
      ),
    );
    if (!canEdit) for (const input of tableBox.querySelectorAll('input, select')) input.disabled = true;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const changes = {};
    for (const input of tableBox.querySelectorAll('input[name], select[name]')) {
      const key = input.name;
      const before = current.settings[key];
      const after = inputValue(input, before);
      if (after !== before) changes[key] = after;
    }
    if (Object.keys(changes).length === 0) {
      page.announce('Nothing changed.');
      return;
    }
    void apply(changes);
  });
  node.addEventListener('change', () => load().catch((error) => page.reportError(error)));
  await load();
}
