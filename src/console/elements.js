/** Building the console's DOM: elements, labelled controls, tables, badges and notices. */

/** Properties set as DOM properties rather than attributes. */
const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'required', 'open', 'indeterminate', 'max']);

/**
 * An element: `el('button', {class: 'primary', on: {click}}, 'Save')`. `text` sets the text,
 * `on` adds listeners; children may be strings, nodes, arrays, or null/false (left out).
 */
export function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = value;
    else if (name === 'on') for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    else if (PROPERTIES.has(name)) element[name] = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** Appends children (strings, nodes, nested arrays; null and false left out). */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

let controlCount = 0;

/** A control with its label: `labelled('Collection', el('input'))`; the control gets an id if it has none. */
export function labelled(text, control, hint) {
  if (!control.id) control.id = `control-${++controlCount}`;
  return el('div', { class: 'field' }, el('label', { for: control.id, text }), control, hint ? el('p', { class: 'hint', text: hint }) : null);
}

/** A checkbox with its label on the same line. */
export function checkbox(text, checked = false) {
  const input = el('input', { type: 'checkbox', checked });
  return { input, element: el('label', { class: 'inline' }, input, text) };
}

/**
 * A table: `columns` are `{label, cell(row) → node or text, numeric?}`; `rowClass(row)` may name
 * a class per row. Wrapped for horizontal scrolling.
 */
export function table(columns, rows, { caption, rowClass, empty = 'Nothing to show.' } = {}) {
  if (rows.length === 0) return el('p', { class: 'muted', text: empty });
  const head = el('tr', {}, columns.map((column) => el('th', { scope: 'col', class: column.numeric ? 'number' : null, text: column.label })));
  const body = rows.map((row) =>
    el('tr', { class: rowClass?.(row) ?? null }, columns.map((column) => el('td', { class: column.numeric ? 'number' : null }, column.cell(row)))),
  );
  return el('div', { class: 'table-wrap' }, el('table', {}, caption ? el('caption', { class: 'muted', text: caption }) : null, el('thead', {}, head), el('tbody', {}, body)));
}

/** A coloured badge for a health status (`green`, `yellow`, `red`) or any state word. */
export function statusBadge(status) {
  return el('span', { class: `badge status-${status}`, text: String(status) });
}

/** A labelled figure for a row of cards. */
export function card(label, value, className) {
  return el('div', { class: 'card' }, el('div', { class: 'label', text: label }), el('div', { class: `value ${className ?? ''}`, text: String(value) }));
}

/** An error notice for a failed call (the ES type and reason). */
export function errorNotice(error) {
  const type = error?.type ? `${error.type}: ` : '';
  return el('div', { class: 'notice-error', role: 'alert' }, `${type}${error?.message ?? String(error)}`);
}

/** Pretty JSON in a `pre`. */
export function jsonBlock(value) {
  return el('pre', { class: 'json', text: JSON.stringify(value, null, 2) });
}

/** Replaces the children of `parent`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}
