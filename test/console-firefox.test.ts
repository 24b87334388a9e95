/**
 * The web console in Firefox: Debian's `firefox-esr`, headless, driven by puppeteer-core over
 * WebDriver BiDi (playwright-core drives only its own patched Firefox, which would have to be
 * downloaded). Against a real server with security on: sign in through the login form, every page
 * of the navigation renders its heading and the server's real data (a search with highlights, a
 * write seen live on the change feed, uPlot's charts), the navigation links are reached with Tab
 * in order and followed with Enter, and no page logged a console error or an uncaught error.
 * Skipped, saying so, when no Firefox is on the PATH (`.ci/run` installs `firefox-esr`;
 * `TROVE_TEST_FIREFOX` names another binary).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser, type ElementHandle, type Page } from 'puppeteer-core';
import { call, startServer, type CallOptions, type TroveServer } from './harness.ts';
import { FIREFOX, FIREFOX_SKIP_REASON, VIEWPORT, WAIT_MS } from './console-browser.ts';

/** Longest wait for Firefox to start, and for any one WebDriver BiDi command. */
const LAUNCH_MS = 20_000;
/** Longest wait for Firefox to close before its process is killed. */
const CLOSE_MS = 5_000;
/** Tab presses allowed to walk from the top of the page through the whole navigation. */
const MAX_TABS = 30;

/** The navigation, in order: each page's hash and heading (src/console/app.js). */
const PAGES = [
  { id: 'cluster', title: 'Cluster' },
  { id: 'collections', title: 'Collections' },
  { id: 'search', title: 'Search' },
  { id: 'changes', title: 'Change feed' },
  { id: 'jobs', title: 'Compaction & jobs' },
  { id: 'trash', title: 'Trash' },
  { id: 'settings', title: 'Node settings' },
  { id: 'keys', title: 'API keys' },
];

let server: TroveServer;
let adminKey: string;
let trashItemId: string;
let browser: Browser | undefined;
let page: Page;
/** Console errors and uncaught page errors the page logged. */
const browserErrors: string[] = [];

/** An API call with the admin key that must succeed. */
async function admin(method: string, path: string, options: CallOptions = {}) {
  const response = await call(server, method, path, { ...options, apiKey: adminKey });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
  return response;
}

/** Waits until the element `selector` names shows text matching `pattern`. */
async function waitForText(selector: string, pattern: RegExp): Promise<void> {
  try {
    await page.waitForFunction(
      (wanted: string, source: string, flags: string) => {
        const element = document.querySelector<HTMLElement>(wanted);
        return element !== null && new RegExp(source, flags).test(element.innerText);
      },
      { timeout: WAIT_MS },
      selector,
      pattern.source,
      pattern.flags,
    );
  } catch (error) {
    const shown = await page.$eval(selector, (element) => (element as HTMLElement).innerText).catch(() => '(not on the page)');
    throw new Error(`${selector} never showed ${pattern}; it shows: ${shown.slice(0, 500)}`, { cause: error });
  }
}

/** The selector of the form control labelled `label` on the page in view. */
async function control(label: string): Promise<string> {
  const id = await page.waitForFunction(
    (text: string) => [...document.querySelectorAll<HTMLLabelElement>('#page label')].find((element) => element.textContent === text)?.htmlFor || null,
    { timeout: WAIT_MS },
    label,
  );
  return `#${await id.jsonValue()}`;
}

/** Replaces the value of the control labelled `label` by typing `text`. */
async function fill(label: string, text: string): Promise<void> {
  const selector = await control(label);
  await page.$eval(selector, (input) => ((input as HTMLInputElement).value = ''));
  await page.type(selector, text);
}

/** Clicks the enabled button whose accessible name (its aria-label, else its text) is `name`. */
async function clickButton(name: string): Promise<void> {
  const found = await page.waitForFunction(
    (wanted: string) =>
      [...document.querySelectorAll('button')].find((button) => !button.disabled && (button.getAttribute('aria-label') ?? button.textContent?.trim()) === wanted) ?? null,
    { timeout: WAIT_MS },
    name,
  );
  const button = found.asElement() as ElementHandle<HTMLButtonElement>;
  try {
    await button.click();
  } finally {
    await button.dispose();
  }
}

/** Goes to a console page by its hash; resolves once its heading and body are shown. */
async function visit(id: string, title: string): Promise<void> {
  await page.evaluate((hash: string) => (location.hash = hash), `#/${id}`);
  await page.waitForSelector(`[data-page="${id}"]`);
  assert.equal(await page.$eval('#page h1', (heading) => heading.textContent), title);
  assert.equal(await page.$eval(`#nav a[href="#/${id}"]`, (link) => link.getAttribute('aria-current')), 'page');
}

/** Closes Firefox; kills its process when it does not close in time. */
async function closeBrowser(opened: Browser): Promise<void> {
  const closed = await Promise.race([opened.close().then(() => true, () => false), sleep(CLOSE_MS).then(() => false)]);
  if (!closed) opened.process()?.kill('SIGKILL');
}

if (FIREFOX === null) {
  test('the console in Firefox', (t) => {
    t.skip(FIREFOX_SKIP_REASON);
  });
} else {
  describe('the console in Firefox', () => {
    before(
      async () => {
        server = await startServer({ security: true, settings: { 'node.name': 'node-1' } });
        adminKey = await server.bootstrapKey();
        await admin('PUT', '/books', { json: { settings: { number_of_shards: 2 }, mappings: { properties: { title: { type: 'text' }, year: { type: 'integer' } } } } });
        const books = [
          { title: 'The Name of the Rose', year: 1980 },
          { title: "Foucault's Pendulum", year: 1988 },
          { title: 'Invisible Cities', year: 1972 },
        ];
        for (const [index, book] of books.entries()) await admin('PUT', `/books/_doc/b${index + 1}`, { json: book });
        await admin('PUT', '/_namespace/shop');
        await admin('PUT', '/orders', { json: { namespace: 'shop' } });
        await admin('PUT', '/orders/_doc/o1', { json: { item: 'lamp', total: 40 } });
        await admin('PUT', '/old-books', { json: { mappings: { properties: { title: { type: 'text' } } } } });
        await admin('PUT', '/old-books/_doc/1', { json: { title: 'Baudolino' } });
        await admin('PUT', '/old-books/_doc/2', { json: { title: 'The Island of the Day Before' } });
        trashItemId = (await admin('DELETE', '/old-books')).body.trash_items[0].item_id;

        browser = await puppeteer.launch({
          browser: 'firefox',
          executablePath: FIREFOX!,
          headless: true,
          defaultViewport: VIEWPORT,
          timeout: LAUNCH_MS,
          protocolTimeout: LAUNCH_MS,
        });
        page = await browser.newPage();
        page.setDefaultTimeout(WAIT_MS);
        page.on('console', (message) => {
          if (message.type() === 'error') browserErrors.push(`console: ${message.text()}`);
        });
        page.on('pageerror', (error) => browserErrors.push(`page error: ${error instanceof Error ? error.message : String(error)}`));
      },
      { timeout: 60_000 },
    );

    after(
      async () => {
        if (browser !== undefined) await closeBrowser(browser);
        await server?.cleanup();
      },
      { timeout: 30_000 },
    );

    test('signs in through the login form', { timeout: 30_000 }, async () => {
      await page.goto(`${server.url}/_console`);
      await page.waitForSelector('#api-key');
      await page.type('#api-key', adminKey);
      await page.click('#login-form button[type="submit"]');
      await page.waitForSelector('#nav a');
      const links = await page.$$eval('#nav a', (anchors) => anchors.map((anchor) => [anchor.getAttribute('href'), anchor.textContent]));
      assert.deepEqual(
        links,
        PAGES.map((entry) => [`#/${entry.id}`, entry.title]),
      );
      assert.match(await page.$eval('#who', (who) => who.textContent ?? ''), /bootstrap-admin \(admin\)/);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('trove.console.api_key')), adminKey);
      assert.doesNotMatch(page.url(), new RegExp(adminKey));
    });

    test('every page renders its heading and the server data', { timeout: 60_000 }, async () => {
      const [cluster, collections, search, changes, jobs, trash, settings, keys] = PAGES;

      await visit(cluster!.id, cluster!.title);
      await waitForText('[data-section="health"]', /Collections\s*2/);
      await waitForText('[data-section="nodes"]', /node-1[\s\S]*master/);
      await waitForText('[data-section="node-details"]', /Node node-1[\s\S]*CPU steal %[\s\S]*Indexing and search rates/);
      await page.waitForFunction(() => document.querySelectorAll('[data-section="node-details"] .chart canvas').length >= 2, { timeout: WAIT_MS });

      await visit(collections!.id, collections!.title);
      await waitForText('section[data-namespace="default"]', /books[\s\S]*\b3\b/);
      await waitForText('section[data-namespace="shop"]', /orders/);
      await clickButton('Show collection books');
      await waitForText('[data-section="shard-map"]', /primary started in sync[\s\S]*primary started in sync/);

      await visit(search!.id, search!.title);
      await fill('Collections', 'books');
      await fill('Query (simple query string)', 'rose');
      await clickButton('Search');
      await waitForText('[data-section="results"] .summary', /1 hits · took \d+ ms/);
      assert.equal(await page.$eval('[data-section="results"] mark', (mark) => mark.textContent), 'Rose');

      await visit(changes!.id, changes!.title);
      await page.select(await control('Collection'), 'books');
      await clickButton('Start');
      await page.waitForSelector('[data-feed-state="live"]');
      // The stream is open once the server counts it.
      const deadline = Date.now() + WAIT_MS;
      while ((await admin('GET', '/_node/_local/stats')).body.changes.open_feeds < 1) {
        assert.ok(Date.now() < deadline, 'the change feed never opened its stream');
        await sleep(50);
      }
      await admin('PUT', '/books/_doc/live-1', { json: { title: 'The Prague Cemetery', year: 2010 } });
      await waitForText('tr[data-id="live-1"]', /index/);
      await clickButton('Pause');
      await page.waitForSelector('[data-feed-state="paused"]');

      await visit(jobs!.id, jobs!.title);
      await waitForText('[data-page="jobs"]', /Jobs/);
      assert.ok((await page.$$eval(`${await control('Collection')} option`, (options) => options.map((option) => option.textContent))).includes('books'));

      await visit(trash!.id, trash!.title);
      await waitForText(`[data-item="${trashItemId}"]`, /old-books[\s\S]*2 documents/);

      await visit(settings!.id, settings!.title);
      await waitForText('[data-section="settings"]', /trash\.retention_secs[\s\S]*604800/);
      await waitForText('[data-section="settings"]', /log\.level/);

      await visit(keys!.id, keys!.title);
      await waitForText('[data-section="keys"]', /bootstrap-admin/);
    });

    test('Tab reaches every navigation link in order; Enter follows one', { timeout: 30_000 }, async () => {
      await page.evaluate(() => (location.hash = '#/cluster'));
      await page.waitForSelector('[data-page="cluster"]');
      // Start from the top of the page: the skip link is the first stop.
      await page.$eval('.skip-link', (link) => (link as HTMLElement).focus());
      const wanted = PAGES.map((entry) => `#/${entry.id}`);
      const reached: string[] = [];
      for (let press = 0; press < MAX_TABS && reached.length < wanted.length; press++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => (document.activeElement?.closest('#nav') ? document.activeElement.getAttribute('href') : null));
        if (focused !== null && !reached.includes(focused)) reached.push(focused);
      }
      assert.deepEqual(reached, wanted, `Tab reached ${reached.join(', ') || 'no navigation link'} in ${MAX_TABS} presses`);
      // Focus is on the last link, the keys page: Enter opens it.
      await page.keyboard.press('Enter');
      await page.waitForSelector('[data-page="keys"]');
      assert.equal(await page.evaluate(() => location.hash), '#/keys');
    });

    test('no page logged a console error', async () => {
      assert.deepEqual(browserErrors, []);
    });
  });
}
