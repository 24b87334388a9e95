/**
 * Change feed page: a live tail of a collection's `_changes` (`feed=eventsource`, read through
 * `fetch` so the key stays in a header). Pausing ends the stream; resuming starts a new one from
 * the cursor shown, which the user may also edit (`now`, `0`, or any `seq`).
 */
import { api, readEventStream, segment, withQuery } from '../api.js';
import { checkbox, el, errorNotice, labelled, replace } from '../elements.js';

/** Rows kept on screen; older ones drop off the bottom. */
const MAX_ROWS = 500;
/** Heartbeat asked of the server, so an idle stream stays open. */
const HEARTBEAT_MS = 15000;
/** Wait before reconnecting after the stream ended unexpectedly. */
const RECONNECT_MS = 2000;

/** The change feed page. */
export async function renderChanges(root, page) {
  const namespaces = await api.get('/_namespace', { signal: page.signal });
  const collections = namespaces.namespaces.flatMap((namespace) => namespace.collections).sort();
  const collection = el('select', { name: 'collection' }, collections.map((name) => el('option', { value: name, text: name })));
  const cursor = el('input', { name: 'since', value: 'now', size: 40, autocomplete: 'off', spellcheck: 'false' });
  const includeDocs = checkbox('Include documents');
  const start = el('button', { type: 'button', class: 'primary', text: 'Start' });
  const pause = el('button', { type: 'button', text: 'Pause', disabled: true });
  const state = el('p', { class: 'muted', 'data-feed-state': 'stopped', text: 'Stopped.' });
  const rows = el('tbody');
  const feedTable = el('div', { class: 'table-wrap feed' }, el('table', {}, el('thead', {}, el('tr', {}, ['Received', 'Seq', 'Id', 'Op', 'Version', 'Document'].map((label) => el('th', { scope: 'col', text: label })))), rows));
  const errorBox = el('div');
  root.append(
    el(
      'form',
      { class: 'panel', 'aria-label': 'Change feed', on: { submit: (event) => event.preventDefault() } },
      el('div', { class: 'row' }, labelled('Collection', collection), labelled('Cursor (since)', cursor, 'now = only new changes, 0 = the oldest retained, or a seq shown below'), includeDocs.element),
      el('div', { class: 'actions' }, start, pause),
    ),
    state,
    errorBox,
    feedTable,
  );
  if (collections.length === 0) {
    start.disabled = true;
    state.textContent = 'No collection to follow yet.';
    return;
  }

  let stream = null;
  let received = 0;
  const setState = (name, text) => {
    state.dataset.feedState = name;
    state.textContent = text;
  };
  const addRow = (change) => {
    const row = el(
      'tr',
      { 'data-id': change.id },
      el('td', { text: new Date().toLocaleTimeString('en-GB') }),
      el('td', {}, el('code', { text: change.seq ?? '' })),
      el('td', { text: change.id }),
      el('td', { text: change.op }),
      el('td', { class: 'number', text: String(change.version ?? '') }),
      el('td', {}, change.doc ? el('code', { text: JSON.stringify(change.doc) }) : ''),
    );
    rows.prepend(row);
    while (rows.children.length > MAX_ROWS) rows.lastElementChild.remove();
  };

  const follow = async () => {
    const controller = new AbortController();
    page.signal.addEventListener('abort', () => controller.abort(), { once: true });
    stream = controller;
    start.disabled = true;
    pause.disabled = false;
    collection.disabled = true;
    replace(errorBox);
    const since = cursor.value.trim() || 'now';
    setState('live', `Following ${collection.value} from ${since}…`);
    const path = withQuery(`/${segment(collection.value)}/_changes`, { feed: 'eventsource', since, heartbeat: HEARTBEAT_MS, include_docs: includeDocs.input.checked ? 'true' : undefined });
    try {
      await readEventStream(path, {
        signal: controller.signal,
        onEvent: ({ event, id, data }) => {
          if (event === 'heartbeat') return;
          if (event === 'last_seq') {
            const last = JSON.parse(data);
            if (last?.last_seq) cursor.value = last.last_seq;
            return;
          }
          const change = JSON.parse(data);
          received++;
          addRow(change);
          if (id || change.seq) cursor.value = id || change.seq;
          setState('live', `Live: ${received} change${received === 1 ? '' : 's'} received. Pause to stop; resume continues from the cursor.`);
        },
      });
      if (stream === controller && page.active) {
        setState('ended', 'The server ended the feed; reconnecting from the cursor…');
        setTimeout(() => {
          if (stream === controller && page.active) follow();
        }, RECONNECT_MS);
      }
    } catch (error) {
      if (error?.name !== 'AbortError') {
        replace(errorBox, errorNotice(error));
        setState('failed', 'The feed failed.');
        stop();
      }
    }
  };
  const stop = () => {
    stream?.abort();
    stream = null;
    start.disabled = false;
    pause.disabled = true;
    collection.disabled = false;
  };
  start.addEventListener('click', () => {
    start.textContent = 'Resume';
    void follow();
  });
  pause.addEventListener('click', () => {
    stop();
    setState('paused', `Paused at cursor ${cursor.value}. Resume continues from there.`);
    start.focus();
  });
  collection.addEventListener('change', () => {
    cursor.value = 'now';
    start.textContent = 'Start';
    rows.replaceChildren();
    received = 0;
  });
  page.onLeave(stop);
}
