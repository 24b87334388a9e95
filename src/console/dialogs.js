/** A confirmation dialog (`<dialog>`, keyboard reachable; Escape cancels) for actions that lose or move data. */
import { el } from './elements.js';

/**
 * Asks to confirm: `title`, a `message`, optional `items` (what is affected, listed), and the
 * confirm button's label. Resolves true when confirmed, false when cancelled.
 */
export function confirmAction({ title, message, items = [], confirmLabel = 'Confirm', danger = true }) {
  return new Promise((resolve) => {
    const cancel = el('button', { type: 'button', text: 'Cancel', value: 'cancel' });
    const confirm = el('button', { type: 'button', class: danger ? 'danger' : 'primary', text: confirmLabel, value: 'confirm' });
    const dialog = el(
      'dialog',
      { 'aria-labelledby': 'confirm-title' },
      el('h2', { id: 'confirm-title', text: title }),
      el('p', { text: message }),
      items.length > 0 ? el('ul', {}, items.map((item) => el('li', {}, item))) : null,
      el('div', { class: 'actions' }, confirm, cancel),
    );
    const finish = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    cancel.addEventListener('click', () => finish(false));
    confirm.addEventListener('click', () => finish(true));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
