/**
 * API keys page (admin): every key without its secret; create a key (the secret is shown once,
 * here, and never again); revoke a key.
 */
import { api, segment } from '../api.js';
import { el, errorNotice, labelled, replace, table } from '../elements.js';
import { formatTime } from '../format.js';
import { confirmAction } from '../dialogs.js';

const ROLES = ['monitor', 'read', 'write', 'manage', 'admin'];

/** The API keys page. */
export async function renderKeys(root, page) {
  const name = el('input', { name: 'key-name', required: true, autocomplete: 'off' });
  const role = el('select', { name: 'key-role' }, ROLES.map((option) => el('option', { value: option, text: option, selected: option === 'read' })));
  const namespaces = el('input', { name: 'key-namespaces', autocomplete: 'off', placeholder: 'all namespaces' });
  const expires = el('input', { name: 'key-expires', type: 'number', min: 1, max: 315360000, placeholder: 'never' });
  const secretBox = el('div', { 'aria-live': 'polite' });
  const messageBox = el('div');
  const listBox = el('div', { 'data-section': 'keys' });

  const refresh = async () => {
    const answer = await api.get('/_security/api_key', { signal: page.signal });
    replace(
      listBox,
      table(
        [
          { label: 'Name', cell: (key) => key.name },
          { label: 'Id', cell: (key) => el('code', { text: key.id }) },
          { label: 'Role', cell: (key) => key.role },
          { label: 'Namespaces', cell: (key) => (key.namespaces ? key.namespaces.join(', ') : 'all') },
          { label: 'Created', cell: (key) => formatTime(key.created) },
          { label: 'Expires', cell: (key) => (key.expires ? formatTime(key.expires) : 'never') },
          { label: 'Last used', cell: (key) => formatTime(key.last_used) },
          { label: 'State', cell: (key) => el('span', { class: `badge status-${key.expired ? 'red' : 'green'}`, text: key.expired ? 'expired' : 'valid' }) },
          { label: 'Revoke', cell: (key) => el('button', { type: 'button', class: 'danger', text: 'Revoke', 'aria-label': `Revoke key ${key.name}`, on: { click: () => revoke(key) } }) },
        ],
        answer.api_keys,
      ),
    );
  };

  const revoke = async (key) => {
    replace(messageBox);
    const confirmed = await confirmAction({ title: `Revoke key ${key.name}?`, message: 'Its very next request is refused. This cannot be undone: clients using it need a new key.', items: [`${key.name} (${key.id}), role ${key.role}`], confirmLabel: 'Revoke' });
    if (!confirmed) return;
    try {
      await api.delete(`/_security/api_key/${segment(key.id)}`, { signal: page.signal });
      page.announce(`Revoked key ${key.name}.`);
      await refresh();
    } catch (error) {
      if (error?.name !== 'AbortError') replace(messageBox, errorNotice(error));
    }
  };

  const create = async (event) => {
    event.preventDefault();
    replace(messageBox);
    replace(secretBox);
    const body = { name: name.value.trim(), role: role.value };
    const scope = namespaces.value.split(',').map((part) => part.trim()).filter(Boolean);
    if (scope.length > 0) body.namespaces = scope;
    if (expires.value !== '') body.expires_in_secs = Number(expires.value);
    try {
      const answer = await api.post('/_security/api_key', body, { signal: page.signal });
      const secret = el('code', { 'data-secret': answer.id, text: answer.api_key });
      const copy = el('button', { type: 'button', text: 'Copy', on: { click: () => navigator.clipboard?.writeText(answer.api_key).then(() => page.announce('Copied the key.'), () => page.announce('Copying failed: select the key and copy it.')) } });
      replace(secretBox, el('div', { class: 'secret', role: 'region', 'aria-label': 'New API key' }, el('p', {}, el('strong', { text: `Key ${answer.name} (${answer.role}) created. ` }), 'This is the only time its secret is shown: store it now.'), el('p', {}, secret, ' ', copy)));
      name.value = '';
      await refresh();
    } catch (error) {
      if (error?.name !== 'AbortError') replace(messageBox, errorNotice(error));
    }
  };

  root.append(
    el(
      'form',
      { class: 'panel', 'aria-label': 'Create an API key', on: { submit: create } },
      el('h2', { text: 'Create a key' }),
      el('div', { class: 'row' }, labelled('Name', name), labelled('Role', role), labelled('Namespaces (comma list, optional)', namespaces), labelled('Expires in seconds (optional)', expires), el('button', { type: 'submit', class: 'primary', text: 'Create key' })),
    ),
    secretBox,
    messageBox,
    el('h2', { text: 'Keys' }),
    listBox,
  );
  await refresh();
}
