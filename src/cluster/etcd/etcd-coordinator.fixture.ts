/**
 * Helpers of the etcd coordinator tests: one etcd per test file (test/etcd.fixture.ts), a fresh
 * cluster name per test, coordinators as separate in-process nodes (each its own etcd client),
 * and bounded waits.
 */
import { after, before } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { etcdSkipReason, startEtcd, startTcpProxy, type EtcdServer, type TcpProxy } from '../../../test/etcd.fixture.ts';
import type { CatalogEvent } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import type { NodeRegistration } from '../coordinator.ts';
import { EtcdCoordinator, type EtcdCoordinatorOptions } from './etcd-coordinator.ts';

/** Why these tests are skipped here (etcd missing), or undefined. */
export const skip = etcdSkipReason();
if (skip !== undefined) console.log(`# skipping etcd coordinator tests: ${skip}`);

/** A mapping with one text field. */
export const MAPPING = { properties: { title: { type: 'text' as const } } };
/** One shard, no replica. */
export const ONE_SHARD = { number_of_shards: 1, number_of_replicas: 0 };

/** Starts one etcd for the file's tests (none when etcd is missing); `etcd()` returns it. */
export function useEtcd(): () => EtcdServer {
  let server: EtcdServer | undefined;
  before(async () => {
    if (skip === undefined) server = await startEtcd();
  });
  after(async () => {
    await server?.cleanup();
  });
  return () => {
    if (server === undefined) throw new Error('etcd is not running');
    return server;
  };
}

let clusters = 0;

/** A cluster name no other test of this process uses. */
export function uniqueCluster(): string {
  clusters += 1;
  return `test-${process.pid}-${clusters}`;
}

/** A node registration with the given id. */
export function node(id: string): NodeRegistration {
  return { id, name: id, address: `http://127.0.0.1:9${id.length}00`, version: '0.1.0', roles: ['data'] };
}

/** Opens a coordinator (a node) on `endpoint`; quiet unless TROVE_TEST_LOG names a level. */
export function openNode(endpoint: string, clusterName: string, options: Partial<EtcdCoordinatorOptions> = {}): Promise<EtcdCoordinator> {
  const logger = pino({ level: process.env.TROVE_TEST_LOG ?? 'silent' });
  return EtcdCoordinator.open({ endpoints: [endpoint], clusterName, logger, ...options });
}

/** A node that reaches etcd through its own TCP proxy: `proxy.cut()` makes it dead to etcd. */
export async function openNodeBehindProxy(
  endpoint: string,
  clusterName: string,
  options: Partial<EtcdCoordinatorOptions> = {},
): Promise<{ coordinator: EtcdCoordinator; proxy: TcpProxy }> {
  const proxy = await startTcpProxy(endpoint);
  try {
    return { coordinator: await openNode(proxy.endpoint, clusterName, options), proxy };
  } catch (error) {
    await proxy.close();
    throw error;
  }
}

/** Polls `check` every 25 ms until it returns true; throws naming `what` after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await sleep(25);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Records every event a coordinator's watch delivers. */
export function record(coordinator: EtcdCoordinator): CatalogEvent[] {
  const events: CatalogEvent[] = [];
  coordinator.watch((event) => void events.push(event));
  return events;
}

/** The change kinds of each event, for comparing sequences. */
export function kinds(events: CatalogEvent[]): string[][] {
  return events.map((event) => event.changes.map((change) => change.kind));
}

/** An assert.rejects predicate for a CatalogError code. */
export function isCatalogError(code: string): (error: unknown) => boolean {
  return (error) => error instanceof CatalogError && error.code === code;
}

/** Closes every coordinator, ignoring failures (test cleanup). */
export async function closeAll(...coordinators: (EtcdCoordinator | undefined)[]): Promise<void> {
  await Promise.allSettled(coordinators.map((coordinator) => coordinator?.close()));
}
