/**
 * Test fixture process for worker-shard-host.test.ts: starts a one-worker pool (under whichever
 * way of running TypeScript launched it), writes and reads one document, and prints `started`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { DEFAULT_ENGINE_SETTINGS } from '../../engine/shard/settings.ts';
import { WorkerShardHost } from './worker-shard-host.ts';

const dir = await mkdtemp(path.join(os.tmpdir(), 'trove-worker-start-'));
const host = new WorkerShardHost({ workers: 1, logger: pino({ level: 'warn' }) });
try {
  const mapping = { properties: { title: { type: 'text' as const } } };
  const shard = await host.open({ dir, uuid: 'start', mapping, settings: DEFAULT_ENGINE_SETTINGS, bindings: {} });
  await shard.write({ kind: 'index', id: 'a', source: { title: 'started' } });
  const document = await shard.get('a');
  process.stdout.write(`${String(document?.source.title)}\n`);
} finally {
  await host.close();
  await rm(dir, { recursive: true, force: true });
}
