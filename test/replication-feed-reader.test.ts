/**
 * The change-feed reader of the replication suite against a scripted `_changes` server: each
 * change it appends must come from a different answer, so that the suite's "each acknowledged
 * write exactly once" check judges the cluster and not the reader. The server holds the reader's
 * long poll (as a node does while the global checkpoint has not reached the next change) and
 * answers it with the changes past its cursor once the drain's first read was answered, or after
 * `HOLD_MS`: a reader whose drain overlaps its tailing gets those changes twice.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { FeedReader } from './replication-workload.ts';

const COLLECTION = 'feed';
const HOLD_MS = 300;
/** The log of the scripted server: cursor `n` has seen the first `n` changes. */
const LOG = [
  { id: 'd29', seq: 1107 },
  { id: 'd19', seq: 1108 },
];

function resultsAfter(cursor: number): { results: unknown[]; last_seq: string; pending: number } {
  const results = LOG.slice(cursor).map(({ id, seq }) => ({
    seq: null,
    id,
    op: 'index',
    version: 1,
    changes: [{ rev: `1-${seq.toString(16).padStart(16, '0')}` }],
  }));
  return { results, last_seq: String(LOG.length), pending: 0 };
}

test('the feed reader drains without a long poll of the same cursor still in flight', async () => {
  let longPollHeld: (() => void) | null = null;
  const requests: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const feed = url.searchParams.get('feed') ?? 'normal';
    const cursor = Number(url.searchParams.get('since') ?? '0');
    requests.push(`${feed} ${cursor}`);
    const reply = (): void => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(resultsAfter(cursor)));
    };
    if (feed === 'longpoll' && cursor < LOG.length) {
      const timer = setTimeout(() => release(), HOLD_MS);
      const release = (): void => {
        clearTimeout(timer);
        longPollHeld = null;
        reply();
      };
      longPollHeld = release;
      return;
    }
    if (feed === 'longpoll') {
      setTimeout(reply, 20);
      return;
    }
    reply();
    // The drain's read was answered: the checkpoint "moved", so the held long poll answers too.
    const held = longPollHeld as (() => void) | null;
    if (held) setImmediate(held);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const reader = new FeedReader({ collection: COLLECTION, shards: 3, pickNode: () => ({ url: `http://127.0.0.1:${port}` }) });
  try {
    reader.start();
    for (let waited = 0; longPollHeld === null && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(longPollHeld !== null, `the reader's long poll reached the server (requests: ${requests.join(', ')})`);
    assert.equal(await reader.drain(Date.now() + 5_000), true);
    await reader.stop();
    const keys = reader.entries.map((entry) => `${entry.id}@${entry.seq}`);
    assert.deepEqual(keys, ['d29@1107', 'd19@1108'], `requests: ${requests.join(', ')}`);
    assert.equal(reader.failures, 0);
  } finally {
    await reader.stop();
    server.closeAllConnections();
    server.close();
  }
});
