/**
 * What the console suites share: finding a Chromium for playwright-core (Debian's `chromium`;
 * `TROVE_TEST_CHROMIUM` names another binary) and a Firefox for puppeteer-core (Debian's
 * `firefox-esr` on the PATH; `TROVE_TEST_FIREFOX` names another binary), pages that record console
 * errors, signing in on the login form and going to a page by its hash.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

/** Where a Chromium may be: the variable first, then the Debian and other common package paths. */
export const BROWSER_CANDIDATES = [process.env.TROVE_TEST_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].filter(
  (candidate): candidate is string => candidate !== undefined && candidate !== '',
);

/** The Chromium the suites drive, or null when there is none. */
export const BROWSER = BROWSER_CANDIDATES.find((candidate) => existsSync(candidate)) ?? null;

/** Why the console suites cannot run here, or undefined when they can. */
export const BROWSER_SKIP_REASON =
  BROWSER === null ? `no Chromium found (looked for ${BROWSER_CANDIDATES.join(', ')}): install Debian's chromium package or set TROVE_TEST_CHROMIUM` : undefined;

/** Firefox names looked up on the PATH, in order, when `TROVE_TEST_FIREFOX` is not set. */
export const FIREFOX_NAMES = ['firefox-esr', 'firefox'];

/** The first executable called `name` in a directory of the PATH, or null. */
function onPath(name: string): string | null {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here: try the next directory.
    }
  }
  return null;
}

/** The Firefox the Firefox suite drives through WebDriver BiDi, or null when there is none. */
export const FIREFOX = process.env.TROVE_TEST_FIREFOX ? (existsSync(process.env.TROVE_TEST_FIREFOX) ? process.env.TROVE_TEST_FIREFOX : null) : FIREFOX_NAMES.map(onPath).find((found) => found !== null) ?? null;

/** Why the Firefox suite cannot run here, or undefined when it can. */
export const FIREFOX_SKIP_REASON =
  FIREFOX === null
    ? process.env.TROVE_TEST_FIREFOX
      ? `TROVE_TEST_FIREFOX names ${process.env.TROVE_TEST_FIREFOX}, which does not exist`
      : `no Firefox found (looked for ${FIREFOX_NAMES.join(', ')} on the PATH): install Debian's firefox-esr package or set TROVE_TEST_FIREFOX`
    : undefined;

/** Longest wait for anything on a page (data loads, renders, the live feed). */
export const WAIT_MS = 10_000;
export const VIEWPORT = { width: 1280, height: 800 };

/** Opens a fresh page of `context` that appends its console errors and uncaught errors to `errors`. */
export async function openPage(context: BrowserContext, errors: string[]): Promise<Page> {
  const opened = await context.newPage();
  opened.setDefaultTimeout(WAIT_MS);
  opened.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  opened.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return opened;
}

/** Signs in on the login form of the node at `url` with `key`; resolves once the navigation is shown. */
export async function signIn(target: Page, url: string, key: string): Promise<void> {
  await target.goto(`${url}/_console`);
  await target.getByLabel('API key').fill(key);
  await target.getByRole('button', { name: 'Sign in' }).click();
  await target.locator('#nav a').first().waitFor();
}

/** Goes to a console page by its hash and waits for its body. */
export async function visit(target: Page, id: string): Promise<void> {
  await target.evaluate((hash) => (location.hash = hash), `#/${id}`);
  await target.locator(`[data-page="${id}"]`).waitFor();
}

/** The text of each cell of a table, by row, keyed by its column's heading. */
export async function tableCells(table: ReturnType<Page['locator']>): Promise<Array<Record<string, string>>> {
  return table.evaluate((element) => {
    const headings = [...element.querySelectorAll('thead th')].map((heading) => (heading as HTMLElement).innerText.trim());
    return [...element.querySelectorAll('tbody tr')].map((row) =>
      Object.fromEntries([...row.querySelectorAll('td')].map((cell, index) => [headings[index] ?? String(index), (cell as HTMLElement).innerText.replace(/\s+/g, ' ').trim()])),
    );
  });
}
