/**
 * The console's shard map on a real cluster: a real etcd and three nodes with security on (one
 * admin key given to all three through `TROVE_API_KEY`), a collection of two shards with one
 * replica each; once health is green, the collections page of one node, in headless Chromium,
 * shows each shard's primary and replica under the right node names, started and in sync, with
 * the primary term, and the replicas' recoveries from the primary's node to the replica's; no
 * console error. Skipped, saying so, without Chromium or etcd.
 *
 * `TROVE_CONSOLE_SCREENSHOTS=docs/console` also saves the collection's detail as `shard-map.png`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser } from 'playwright-core';
import { etcdSkipReason, startEtcd, type EtcdServer } from './etcd.fixture.ts';
import { call, REPO_ROOT, startServer, type CallOptions, type TroveServer } from './harness.ts';
import { BROWSER, BROWSER_SKIP_REASON, openPage, signIn, tableCells, VIEWPORT, visit } from './console-browser.ts';

const NODE_COUNT = 3;
const COLLECTION = 'shelves';
const SCREENSHOTS = process.env.TROVE_CONSOLE_SCREENSHOTS;

const skipReason = BROWSER_SKIP_REASON ?? etcdSkipReason();
/** The admin key every node creates (or finds) on its first start. */
const adminKey = `console-cluster-${randomBytes(24).toString('base64url')}`;
let etcd: EtcdServer | undefined;
const nodes: TroveServer[] = [];
let browser: Browser | undefined;

/** An API call with the admin key that must succeed. */
async function admin(node: TroveServer, method: string, path: string, options: CallOptions = {}) {
  const response = await call(node, method, path, { ...options, apiKey: adminKey });
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
  return response;
}

/** Polls `probe` until it is true. */
async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

if (skipReason !== undefined) {
  test('the console on a three-node cluster', (t) => {
    t.skip(skipReason);
  });
} else {
  describe('the console on a three-node cluster', () => {
    before(async () => {
      etcd = await startEtcd();
      const endpoint = etcd.endpoint;
      const started = await Promise.allSettled(
        Array.from({ length: NODE_COUNT }, (_, index) =>
          startServer({
            security: true,
            env: { TROVE_API_KEY: adminKey },
            settings: { 'cluster.etcd': endpoint, 'cluster.name': 'console', 'node.name': `node-${index + 1}` },
          }),
        ),
      );
      for (const outcome of started) if (outcome.status === 'fulfilled') nodes.push(outcome.value);
      const failed = started.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
      await until(async () => (await admin(nodes[1]!, 'GET', '/_cluster/health')).body.number_of_nodes === NODE_COUNT, 'the console node sees three nodes');
    });

    after(async () => {
      await browser?.close();
      for (const node of nodes) await node.cleanup();
      await etcd?.cleanup();
    });

    test('the shard map shows each primary and replica on its node, started and in sync, and the recoveries', async () => {
      const consoleNode = nodes[1]!;
      await admin(nodes[0]!, 'PUT', `/${COLLECTION}`, { json: { settings: { number_of_shards: 2, number_of_replicas: 1 }, mappings: { properties: { title: { type: 'text' } } } } });
      for (let index = 0; index < 6; index++) await admin(nodes[index % NODE_COUNT]!, 'PUT', `/${COLLECTION}/_doc/b${index}`, { json: { title: `book ${index}` } });
      await until(async () => (await admin(consoleNode, 'GET', '/_cluster/health')).body.status === 'green', 'the collection is green', 60_000);

      const names = new Map<string, string>();
      for (const node of nodes) {
        const info = (await admin(node, 'GET', '/')).body;
        names.set(info.node_id, info.name);
      }
      const shards: Record<string, { primary: { node: string }; replicas: Array<{ node: string }>; primary_term: number }> = (
        await admin(consoleNode, 'GET', '/_cluster/state/shards')
      ).body.shards[COLLECTION];
      const nodeNames = [...names.values()].sort();
      const expectedMap = Object.entries(shards).map(([number, shard]) => {
        const row: Record<string, string> = { Shard: number, 'Primary term': String(shard.primary_term), Unassigned: '' };
        for (const name of nodeNames) row[name] = '';
        row[names.get(shard.primary.node)!] = 'primary started in sync';
        row[names.get(shard.replicas[0]!.node)!] = 'replica started in sync';
        return row;
      });
      const recoveries = (await admin(consoleNode, 'GET', `/${COLLECTION}/_recovery`)).body[COLLECTION].shards as Array<{ id: number; source: { id: string }; target: { id: string } }>;
      assert.ok(recoveries.length >= 2, `each replica recovered once: ${JSON.stringify(recoveries)}`);

      browser = await chromium.launch({ executablePath: BROWSER!, headless: true });
      const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' });
      const errors: string[] = [];
      const page = await openPage(context, errors);
      await signIn(page, consoleNode.url, adminKey);
      await visit(page, 'collections');
      await page.getByRole('button', { name: `Show collection ${COLLECTION}`, exact: true }).click();
      const detail = page.locator('[data-section="collection-detail"]');
      const map = await tableCells(detail.locator('[data-section="shard-map"] table'));
      for (const row of map) delete row.UUID;
      assert.deepEqual(map, expectedMap);
      assert.equal(await detail.locator('[data-section="shard-map"] [data-in-sync="true"][data-state="started"]').count(), 4);

      const shown = await tableCells(detail.locator('[data-section="recoveries"] table'));
      assert.deepEqual(
        shown.map((row) => [row.Shard, row['Source → target']]),
        recoveries.map((row) => [String(row.id), `${names.get(row.source.id)} → ${names.get(row.target.id)}`]),
      );
      for (const row of recoveries) {
        const shard = shards[String(row.id)]!;
        assert.deepEqual([row.source.id, row.target.id], [shard.primary.node, shard.replicas[0]!.node], 'a replica recovers from its primary');
      }
      if (SCREENSHOTS !== undefined) {
        await mkdir(join(REPO_ROOT, SCREENSHOTS), { recursive: true });
        // From the top of the page to the end of the recoveries.
        const bottom = await detail.locator('[data-section="recoveries"]').evaluate((box) => Math.ceil(box.getBoundingClientRect().bottom + window.scrollY) + 12);
        await page.screenshot({ path: join(REPO_ROOT, SCREENSHOTS, 'shard-map.png'), fullPage: true, clip: { x: 0, y: 0, width: VIEWPORT.width, height: bottom } });
      }
      await page.close();
      assert.deepEqual(errors, []);
    });
  });
}
