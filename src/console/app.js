/**
 * The console shell: the login form, the navigation, and the page in view. The key's role (from
 * `GET /_security/_authenticate`) decides which pages it may open; a page it may not open stays
 * in the navigation, marked, and shows why instead of failing calls. Pages are hash routes
 * (`#/cluster`), so the browser's back button and bookmarks work.
 */
import { ApiError, api, forgetKey, storeKey, storedKey } from './api.js';
import { el, replace } from './elements.js';
import { renderCluster } from './pages/cluster.js';
import { renderCollections } from './pages/collections.js';
import { renderSearch } from './pages/search.js';
import { renderChanges } from './pages/changes.js';
import { renderJobs } from './pages/jobs.js';
import { renderTrash } from './pages/trash.js';
import { renderSettings } from './pages/settings.js';
import { renderKeys } from './pages/keys.js';

/** The roles each role includes (the server's table, src/api/roles.ts). */
const ROLE_GRANTS = {
  monitor: ['monitor'],
  read: ['read'],
  write: ['read', 'write'],
  manage: ['monitor', 'read', 'write', 'manage'],
  admin: ['monitor', 'read', 'write', 'manage', 'admin'],
};

/** Every page: its hash, title, the role it needs to open, and what it renders. */
const PAGES = [
  { id: 'cluster', title: 'Cluster', role: 'monitor', render: renderCluster },
  { id: 'collections', title: 'Collections', role: 'monitor', render: renderCollections },
  { id: 'search', title: 'Search', role: 'read', render: renderSearch },
  { id: 'changes', title: 'Change feed', role: 'read', render: renderChanges },
  { id: 'jobs', title: 'Compaction & jobs', role: 'monitor', render: renderJobs },
  { id: 'trash', title: 'Trash', role: 'monitor', render: renderTrash },
  { id: 'settings', title: 'Node settings', role: 'monitor', render: renderSettings },
  { id: 'keys', title: 'API keys', role: 'admin', render: renderKeys },
];

const STATUS_CLEAR_MS = 8000;

/** The signed-in key: who it is and what it may do. */
class Session {
  constructor(principal) {
    this.principal = principal;
  }

  /** True when the key's role includes `role`. */
  can(role) {
    return ROLE_GRANTS[this.principal.role]?.includes(role) ?? false;
  }

  /** True when the key reaches every namespace. */
  get unrestricted() {
    return this.principal.namespaces === null;
  }

  /** Why the key may not do what needs `role` (for disabled pages and buttons). */
  denial(role) {
    return `Needs the ${role} role; this key (${this.principal.name}) has the ${this.principal.role} role.`;
  }
}

/** What a page gets while it is in view: the session, an abort signal, timers, messages. */
class PageContext {
  constructor(session) {
    this.session = session;
    this.controller = new AbortController();
    this.timers = [];
    this.cleanups = [];
  }

  /** Aborted when the page leaves the view: pass it to every call. */
  get signal() {
    return this.controller.signal;
  }

  /** True while the page is in view. */
  get active() {
    return !this.controller.signal.aborted;
  }

  /** Runs `task` every `ms` while the page is in view (a run waits for the previous one). */
  every(ms, task) {
    let running = false;
    const timer = setInterval(async () => {
      if (running || !this.active) return;
      running = true;
      try {
        await keepingFocus(task);
      } catch (error) {
        this.reportError(error);
      } finally {
        running = false;
      }
    }, ms);
    this.timers.push(timer);
  }

  /** Runs a redraw of part of the page, giving the keyboard focus back to the redrawn control. */
  redraw(task) {
    return keepingFocus(task);
  }

  /** Runs `cleanup` when the page leaves the view. */
  onLeave(cleanup) {
    this.cleanups.push(cleanup);
  }

  /** Shows a passing message. */
  announce(message) {
    if (this.active) showStatus(message, false);
  }

  /** Shows a failed call (aborted calls of a page that left are not failures). */
  reportError(error) {
    if (error?.name === 'AbortError' || !this.active) return;
    if (error instanceof ApiError && error.status === 401) {
      signOut('The node no longer accepts this key: sign in again.');
      return;
    }
    showStatus(error instanceof ApiError ? `${error.type}: ${error.message}` : String(error?.message ?? error), true);
  }

  /** Stops timers, aborts calls and streams, runs the cleanups. */
  leave() {
    this.controller.abort();
    for (const timer of this.timers) clearInterval(timer);
    for (const cleanup of this.cleanups) cleanup();
  }
}

/**
 * Runs a refresh that redraws part of the page; a control that had the keyboard focus and was
 * redrawn gets it back in its new copy (found by its label, id or name).
 */
async function keepingFocus(task) {
  const focused = document.activeElement;
  const label = focused && focused !== document.body ? focused.getAttribute('aria-label') : null;
  const selector = label ? `[aria-label="${CSS.escape(label)}"]` : focused?.id ? `#${CSS.escape(focused.id)}` : focused?.name ? `[name="${CSS.escape(focused.name)}"]` : null;
  await task();
  if (selector !== null && !document.contains(focused)) document.getElementById('page').querySelector(selector)?.focus();
}

let session = null;
let current = null;
let statusTimer = null;

/** Shows a message in the status line; errors stay until the next message. */
function showStatus(message, isError) {
  const status = document.getElementById('status');
  status.textContent = message;
  status.classList.toggle('error-status', isError);
  clearTimeout(statusTimer);
  if (!isError) statusTimer = setTimeout(() => (status.textContent = ''), STATUS_CLEAR_MS);
}

/** The page the hash names, or the first one the key may open. */
function pageFromHash() {
  const id = location.hash.replace(/^#\/?/, '');
  return PAGES.find((page) => page.id === id) ?? PAGES.find((page) => session.can(page.role)) ?? PAGES[0];
}

/** Draws the navigation, marking the current page and the pages the key may not open. */
function renderNav(active) {
  const nav = document.getElementById('nav');
  const links = PAGES.map((page) => {
    const allowed = session.can(page.role);
    return el('a', {
      href: `#/${page.id}`,
      'aria-current': page === active ? 'page' : null,
      'aria-disabled': allowed ? null : 'true',
      title: allowed ? null : session.denial(page.role),
      text: page.title,
    });
  });
  replace(nav, el('ul', {}, links.map((link) => el('li', {}, link))));
}

/** Shows the page the hash names. */
async function showPage() {
  if (session === null) return;
  const page = pageFromHash();
  current?.leave();
  const context = new PageContext(session);
  current = context;
  showStatus('', false);
  renderNav(page);
  document.title = `${page.title} · Trove console`;
  const root = document.getElementById('page');
  replace(root, el('h1', { text: page.title }));
  if (!session.can(page.role)) {
    root.append(el('div', { class: 'denied', 'data-denied': page.id }, el('p', { text: `This page is not available: ${session.denial(page.role)}` }), el('p', { class: 'muted', text: 'Sign in with another key to use it.' })));
    return;
  }
  const body = el('div', { 'data-page': page.id });
  root.append(body);
  try {
    await page.render(body, context);
  } catch (error) {
    context.reportError(error);
  }
}

/** Signs in with `key`: asks the node who the key is, then shows the console. */
async function signIn(key) {
  const principal = await api.get('/_security/_authenticate', { key });
  storeKey(key);
  session = new Session(principal);
  const node = await api.get('/').catch(() => null);
  document.getElementById('node-label').textContent = node ? `${node.name} · ${node.cluster_name}` : '';
  document.getElementById('who').textContent = `${principal.name} (${principal.role}${principal.namespaces ? `; ${principal.namespaces.join(', ')}` : ''})`;
  document.getElementById('login').hidden = true;
  document.getElementById('nav').hidden = false;
  document.getElementById('sign-out').hidden = false;
  // Focus moves before the first page renders, so it never takes focus back from a link the user already chose.
  document.getElementById('main').focus();
  await showPage();
}

/** Signs out: forgets the key and shows the login form, with `message` if any. */
function signOut(message) {
  forgetKey();
  session = null;
  current?.leave();
  current = null;
  replace(document.getElementById('page'));
  document.getElementById('nav').hidden = true;
  document.getElementById('sign-out').hidden = true;
  document.getElementById('who').textContent = '';
  document.getElementById('node-label').textContent = '';
  document.getElementById('login').hidden = false;
  document.getElementById('login-error').textContent = message ?? '';
  document.getElementById('api-key').value = '';
  document.getElementById('api-key').focus();
}

document.getElementById('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = document.getElementById('api-key');
  const key = input.value.trim();
  document.getElementById('login-error').textContent = '';
  try {
    await signIn(key);
    input.value = '';
  } catch (error) {
    forgetKey();
    session = null;
    document.getElementById('login-error').textContent = error instanceof ApiError ? error.message : `Cannot reach the node: ${error.message}`;
  }
});
document.getElementById('sign-out').addEventListener('click', () => signOut());
window.addEventListener('hashchange', () => void showPage());

const saved = storedKey();
if (saved === null) signOut();
else signIn(saved).catch(() => signOut('The saved key was not accepted: sign in again.'));
