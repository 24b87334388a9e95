/**
 * The web console (`GET /_console`) driven in a real headless Chromium through playwright-core,
 * against a real server with security on: sign in with a key, every page shows the server's real
 * data, a restore from the trash page brings a collection back, a settings change shows in the
 * API, the live change feed shows a write made through the API (and resumes from its cursor), a
 * key without the admin role sees the keys page disabled with the reason, and no page logs a
 * console error. Skipped, saying so, when no Chromium is installed (`.ci/run` installs Debian's
 * `chromium`; `TROVE_TEST_CHROMIUM` names another binary).
 *
 * `TROVE_CONSOLE_SCREENSHOTS=docs/console` also saves a screenshot of each main page there.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { consoleAssetPaths } from '../src/api/routes/console.ts';
import { call, REPO_ROOT, startServer, type CallOptions, type TroveServer } from './harness.ts';
import { BROWSER, BROWSER_SKIP_REASON, openPage as openBrowserPage, signIn as signInAt, tableCells, VIEWPORT, visit, WAIT_MS } from './console-browser.ts';

const SCREENSHOTS = process.env.TROVE_CONSOLE_SCREENSHOTS;

let server: TroveServer;
let adminKey: string;
let monitorKey: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let trashItemId: string;
/** Console errors and uncaught page errors, from every page the suite opened. */
const browserErrors: string[] = [];

/** An API call with the admin key that must succeed. */
async function admin(method: string, path: string, options: CallOptions = {}) {
  const response = await call(server, method, path, { ...options, apiKey: adminKey });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
  return response;
}

/** Opens a fresh page that records console errors. */
function openPage(): Promise<Page> {
  return openBrowserPage(context, browserErrors);
}

/** Signs in on the login form with `key`; resolves once the navigation is shown. */
function signIn(target: Page, key: string): Promise<void> {
  return signInAt(target, server.url, key);
}

/** Saves a screenshot of the page when `TROVE_CONSOLE_SCREENSHOTS` names a directory. */
async function screenshot(name: string): Promise<void> {
  if (SCREENSHOTS === undefined) return;
  const directory = join(REPO_ROOT, SCREENSHOTS);
  await mkdir(directory, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(directory, `${name}.png`) });
}

if (BROWSER === null) {
  test('the console in a real browser', (t) => {
    t.skip(BROWSER_SKIP_REASON);
  });
} else {
  describe('the console in a real browser', () => {
    before(async () => {
      server = await startServer({ security: true, settings: { 'node.name': 'node-1' } });
      adminKey = await server.bootstrapKey();
      monitorKey = (await admin('POST', '/_security/api_key', { json: { name: 'dashboards', role: 'monitor' } })).body.api_key;
      await admin('PUT', '/books', {
        json: { settings: { number_of_shards: 2 }, mappings: { properties: { title: { type: 'text' }, tags: { type: 'keyword' }, year: { type: 'integer' } } } },
      });
      const books = [
        { title: 'The Name of the Rose', tags: ['novel', 'mystery'], year: 1980 },
        { title: "Foucault's Pendulum", tags: ['novel'], year: 1988 },
        { title: 'Invisible Cities', tags: ['novel', 'classic'], year: 1972 },
      ];
      for (const [index, book] of books.entries()) await admin('PUT', `/books/_doc/b${index + 1}`, { json: book });
      await admin('PUT', '/_namespace/shop');
      await admin('PUT', '/orders', { json: { namespace: 'shop' } });
      await admin('PUT', '/orders/_doc/o1', { json: { item: 'lamp', total: 40 } });
      await admin('PUT', '/old-books', { json: { mappings: { properties: { title: { type: 'text' } } } } });
      await admin('PUT', '/old-books/_doc/1', { json: { title: 'Baudolino' } });
      await admin('PUT', '/old-books/_doc/2', { json: { title: 'The Island of the Day Before' } });
      trashItemId = (await admin('DELETE', '/old-books')).body.trash_items[0].item_id;

      browser = await chromium.launch({ executablePath: BROWSER!, headless: true });
      context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' });
      page = await openPage();
      await signIn(page, adminKey);
    });

    after(async () => {
      await browser?.close();
      await server?.cleanup();
    });

    test('the console files load without a key; anything else under /_console still needs one', async () => {
      for (const path of consoleAssetPaths()) {
        const response = await call(server, 'GET', path);
        assert.equal(response.status, 200, path);
        assert.match(String(response.headers['content-security-policy']), /default-src 'none'/);
      }
      assert.equal((await call(server, 'GET', '/_console/server.ts')).status, 401);
      assert.equal((await call(server, 'GET', '/_console/..%2f_cluster%2fhealth')).status, 401);
      assert.equal((await call(server, 'POST', '/_console')).status, 401);
      // The key stays out of every URL the page loaded.
      const key = await page.evaluate(() => sessionStorage.getItem('trove.console.api_key'));
      assert.equal(key, adminKey);
    });

    test('cluster: health, nodes, host facts with warnings, steal and rate charts', async () => {
      await visit(page, 'cluster');
      await page.locator('[data-section="health"] .badge').first().waitFor();
      assert.match(await page.locator('[data-section="health"]').innerText(), /Collections\s*2/);
      await page.getByLabel('Detail level').selectOption('shards');
      await page.locator('[data-section="health"] td', { hasText: 'default / books / shard 1' }).waitFor();
      const nodes = await page.locator('[data-section="nodes"]').innerText();
      assert.match(nodes, /node-1/);
      assert.match(nodes, /master/);
      assert.match(nodes, /data, coordinator/);
      const details = page.locator('[data-section="node-details"]');
      await details.getByRole('heading', { name: 'Node node-1' }).waitFor();
      const info = (await admin('GET', '/_node/_local')).body;
      assert.match(await details.innerText(), new RegExp(info.node_id));
      assert.ok((await details.locator('tr.facts').count()) > 10, 'every host fact has a row');
      // Each warning the API reports is listed and its fact is highlighted.
      for (const warning of info.warnings as Array<{ check: string }>) {
        await details.locator('.warnings code', { hasText: warning.check }).waitFor();
      }
      if (info.warnings.length > 0) assert.ok((await details.locator('tr.warning-row').count()) > 0);
      // uPlot draws the two charts on canvases.
      await details.locator('.chart canvas').nth(1).waitFor();
      assert.match(await details.innerText(), /CPU steal %/);
      assert.match(await details.innerText(), /Indexing and search rates/);
      await page.getByLabel('Detail level').selectOption('cluster');
      await screenshot('cluster');
      if (SCREENSHOTS !== undefined) {
        // Some traffic over three stats samples, so that the rates chart has a line to show.
        for (let round = 0; round < 12; round++) {
          await admin('PUT', `/books/_doc/traffic-${round}`, { json: { title: `traffic ${round}` } });
          for (let search = 0; search < round % 4; search++) await admin('POST', '/books/_search', { json: { query: { match: { title: 'rose' } } } });
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        for (let round = 0; round < 12; round++) await admin('DELETE', `/books/_doc/traffic-${round}`);
        await details.getByRole('heading', { name: 'Load' }).evaluate((heading) => heading.scrollIntoView());
        // Figures and charts only: the host facts below name this machine's devices.
        const bottom = await details.locator('.charts').evaluate((charts) => Math.ceil(charts.getBoundingClientRect().bottom) + 12);
        await page.screenshot({ path: join(REPO_ROOT, SCREENSHOTS, 'node.png'), clip: { x: 0, y: 0, width: VIEWPORT.width, height: Math.min(bottom, VIEWPORT.height) } });
      }
    });

    test('collections: by namespace with counts, shard map and mapping; create and delete to the trash', async () => {
      await visit(page, 'collections');
      const defaultNamespace = page.locator('section[data-namespace="default"]');
      const booksRow = defaultNamespace.locator('tr', { has: page.getByRole('button', { name: 'Show collection books', exact: true }) });
      await booksRow.waitFor();
      assert.match(await booksRow.innerText(), /\b3\b/);
      assert.match(await page.locator('section[data-namespace="shop"]').innerText(), /orders/);
      await page.getByRole('button', { name: 'Show collection books', exact: true }).click();
      const detail = page.locator('[data-section="collection-detail"]');
      await detail.getByText('Shard map of books').waitFor();
      const map = await tableCells(detail.locator('[data-section="shard-map"] table'));
      assert.deepEqual(
        map.map((row) => [row.Shard, row['Primary term'], row['node-1'], row.Unassigned]),
        [
          ['0', '1', 'primary started in sync', ''],
          ['1', '1', 'primary started in sync', ''],
        ],
      );
      // One node and no replicas: nothing recovered.
      await detail.locator('[data-section="recoveries"]').getByText('No replica of this collection recovered').waitFor();
      assert.match(await detail.locator('pre').innerText(), /"title"/);
      await screenshot('collections');

      await page.getByText('Create a collection or a namespace').click();
      await page.getByLabel('Name', { exact: true }).fill('scratch');
      await page.getByRole('button', { name: 'Create collection' }).click();
      await page.getByRole('button', { name: 'Delete collection scratch' }).click();
      const dialog = page.getByRole('dialog');
      assert.match(await dialog.innerText(), /moves to the trash/);
      await dialog.getByRole('button', { name: 'Move to trash' }).click();
      await page.getByRole('button', { name: 'Delete collection scratch' }).waitFor({ state: 'detached' });
      assert.equal((await call(server, 'GET', '/scratch', { apiKey: adminKey })).status, 404);
    });

    test('search: query string with highlights, took and totals; DSL with aggregations', async () => {
      await visit(page, 'search');
      await page.getByLabel('Collections').fill('books');
      await page.getByLabel('Query (simple query string)').fill('rose');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const results = page.locator('[data-section="results"]');
      await results.locator('.summary').waitFor();
      assert.match(await results.locator('.summary').innerText(), /1 hits · took \d+ ms/);
      assert.equal(await results.locator('mark').first().innerText(), 'Rose');

      await page.getByLabel('Query DSL (JSON)').check();
      await page.getByLabel('Query DSL (JSON request body)').fill(
        JSON.stringify({ query: { match: { title: 'name pendulum' } }, aggs: { by_tag: { terms: { field: 'tags' } }, first_year: { min: { field: 'year' } } } }, null, 2),
      );
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await results.locator('[data-aggregation="by_tag"]').waitFor();
      assert.match(await results.locator('.summary').innerText(), /2 hits/);
      assert.match(await results.locator('[data-aggregation="by_tag"]').innerText(), /novel\s+2/);
      assert.match(await results.locator('[data-aggregation="first_year"]').innerText(), /1,980/);
      await screenshot('search');
    });

    test('change feed: a write made through the API shows in the live tail; pause and resume from the cursor', async () => {
      await visit(page, 'changes');
      await page.getByLabel('Collection', { exact: true }).selectOption('books');
      await page.getByRole('button', { name: 'Start' }).click();
      await page.locator('[data-feed-state="live"]').waitFor();
      // The stream is open once the server counts it.
      const deadline = Date.now() + WAIT_MS;
      while ((await admin('GET', '/_node/_local/stats')).body.changes.open_feeds < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      await admin('PUT', '/books/_doc/live-1', { json: { title: 'The Prague Cemetery', year: 2010 } });
      await page.locator('tr[data-id="live-1"]').waitFor();
      assert.match(await page.locator('tr[data-id="live-1"]').innerText(), /index/);

      await page.getByRole('button', { name: 'Pause' }).click();
      await page.locator('[data-feed-state="paused"]').waitFor();
      await admin('POST', '/books/_update/live-1', { json: { doc: { year: 2011 } } });
      await page.getByRole('button', { name: 'Resume' }).click();
      await page.locator('tr[data-id="live-1"]', { hasText: 'update' }).waitFor();
      assert.equal(await page.locator('tr[data-id="live-1"]').count(), 2, 'the resumed feed neither lost nor repeated a change');
      await screenshot('changes');
      await page.getByRole('button', { name: 'Pause' }).click();
    });

    test('compaction and jobs: start a compaction, see the node rows and the job finish', async () => {
      await visit(page, 'jobs');
      await page.getByLabel('Collection', { exact: true }).selectOption('books');
      await page.getByRole('button', { name: 'Compact' }).click();
      const rows = page.locator('[data-section="compaction-rows"]');
      await rows.getByText('node-1').waitFor();
      assert.match(await rows.innerText(), /queued/);
      await page.locator('[data-section="jobs"] tr', { hasText: 'books' }).locator('.badge', { hasText: 'done' }).waitFor();
      assert.match(await page.locator('[data-section="jobs"]').innerText(), /2\/2/);
      await screenshot('jobs');
    });

    test('trash: verify the findings per shard, then a restore brings the collection back', async () => {
      await visit(page, 'trash');
      const item = page.locator(`[data-item="${trashItemId}"]`);
      await item.waitFor();
      assert.match(await item.innerText(), /2 documents/);
      assert.match(await item.innerText(), /left\)/);
      await page.getByRole('button', { name: 'Verify old-books' }).click();
      await item.locator('[data-complete="true"]').waitFor();
      assert.match(await item.locator('.findings').innerText(), /ok/);
      await screenshot('trash');
      await page.getByRole('button', { name: 'Restore old-books' }).click();
      await item.waitFor({ state: 'detached' });
      const restored = await admin('POST', '/old-books/_search', { json: { query: { match: { title: 'baudolino' } } } });
      assert.equal(restored.body.hits.total.value, 1);
      assert.equal((await admin('GET', '/old-books/_count')).body.count, 2);
    });

    test('node settings: a change shows in the API with its source; reset goes back to the configuration', async () => {
      await visit(page, 'settings');
      await page.getByLabel('New value of trash.retention_secs').fill('86400');
      await page.getByLabel('New value of log.level').fill('engine=debug');
      await page.getByRole('button', { name: 'Apply changes' }).click();
      await page.getByRole('button', { name: 'Reset trash.retention_secs to the configured value' }).waitFor();
      const changed = (await admin('GET', '/_node/_local/settings')).body;
      assert.equal(changed.settings['trash.retention_secs'], 86400);
      assert.equal(changed.sources['trash.retention_secs'], 'transient');
      assert.equal(changed.settings['log.level'], 'warn,engine=debug');
      assert.match(await page.locator('[data-section="settings"]').innerText(), /targets: engine=debug/);
      await screenshot('settings');
      await page.getByRole('button', { name: 'Reset trash.retention_secs to the configured value' }).click();
      await page.getByRole('button', { name: 'Reset trash.retention_secs to the configured value' }).waitFor({ state: 'detached' });
      const reset = (await admin('GET', '/_node/_local/settings')).body;
      assert.equal(reset.settings['trash.retention_secs'], 604800);
      assert.equal(reset.sources['trash.retention_secs'], 'default');
    });

    test('API keys: list, create (secret shown once), revoke', async () => {
      await visit(page, 'keys');
      await page.locator('[data-section="keys"] td', { hasText: 'bootstrap-admin' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('reporting');
      await page.getByLabel('Role').selectOption('read');
      await page.getByLabel('Namespaces (comma list, optional)').fill('shop');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = await page.locator('[data-secret]').innerText();
      const whoami = await call(server, 'GET', '/_security/_authenticate', { apiKey: secret });
      assert.equal(whoami.body.name, 'reporting');
      assert.deepEqual(whoami.body.namespaces, ['shop']);
      await screenshot('keys');
      await page.getByRole('button', { name: 'Revoke key reporting' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('button', { name: 'Revoke key reporting' }).waitFor({ state: 'detached' });
      assert.equal((await call(server, 'GET', '/', { apiKey: secret })).status, 401);
    });

    test('a monitor key sees the pages it lacks a role for disabled, with the reason', async () => {
      const monitorPage = await openPage();
      try {
        await signIn(monitorPage, monitorKey);
        const keysLink = monitorPage.locator('#nav a[href="#/keys"]');
        assert.equal(await keysLink.getAttribute('aria-disabled'), 'true');
        assert.match(String(await keysLink.getAttribute('title')), /admin role; this key \(dashboards\) has the monitor role/);
        // The link stays reachable from the keyboard: the page says why it is unavailable.
        await keysLink.focus();
        await monitorPage.keyboard.press('Enter');
        const denied = monitorPage.locator('[data-denied="keys"]');
        await denied.waitFor();
        assert.match(await denied.innerText(), /Needs the admin role; this key \(dashboards\) has the monitor role/);
        assert.equal(await monitorPage.locator('#nav a[href="#/search"]').getAttribute('aria-disabled'), 'true');
        // A page it may open shows real data, with the actions it may not take disabled.
        await visit(monitorPage, 'trash');
        await monitorPage.locator('[data-section="trash-summary"]').getByText(/item/).waitFor();
        await visit(monitorPage, 'collections');
        await monitorPage.getByRole('button', { name: 'Show collection books', exact: true }).waitFor();
        assert.equal(await monitorPage.getByRole('button', { name: 'Delete collection books', exact: true }).isDisabled(), true);
      } finally {
        await monitorPage.close();
      }
    });

    test('no page logged a console error', async () => {
      await page.close();
      assert.deepEqual(browserErrors, []);
    });
  });
}
