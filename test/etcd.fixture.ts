/**
 * Test fixture: a real single-member etcd (the `etcd` binary of Debian's `etcd-server`) on two free
 * 127.0.0.1 ports (client and peer) with a temporary data directory, which a test can kill and
 * restart on the same data and ports. Also a TCP proxy that cuts one client off from etcd.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, freePort, startServer, until, type StartOptions, type TroveServer } from './harness.ts';

const READY_TIMEOUT_MS = 30_000;
const OUTPUT_KEEP = 16 * 1024;

/** A running (or stopped) etcd under test. */
export interface EtcdServer {
  /** Client URL, e.g. `http://127.0.0.1:40123`. */
  readonly endpoint: string;
  /** The last 16 KiB of etcd's output, for diagnostics. */
  output(): string;
  /** Whether the etcd process is running. */
  running(): boolean;
  /** Stops etcd (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Sends a signal and waits for etcd to exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts etcd again on the same data directory and ports; waits until it answers. */
  restart(): Promise<void>;
  /** Kills etcd if it still runs and removes its data directory. */
  cleanup(): Promise<void>;
}

/** Path of the `etcd` binary on PATH, or null. */
export function findEtcd(): string | null {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, 'etcd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** Why etcd tests cannot run here (for `{ skip }`), or undefined when they can. */
export function etcdSkipReason(): string | undefined {
  return findEtcd() === null ? 'etcd is not on PATH (install it with `apt-get install etcd-server`)' : undefined;
}

/** Starts etcd on free ports with a fresh data directory and waits until it answers `/health`. */
export async function startEtcd(): Promise<EtcdServer> {
  const binary = findEtcd();
  if (binary === null) throw new Error('etcd is not on PATH: install it with `apt-get install etcd-server`');
  const dataDir = await mkdtemp(join(tmpdir(), 'trove-etcd-'));
  const clientPort = await freePort();
  let peerPort = await freePort();
  while (peerPort === clientPort) peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name', 'trove-test',
    '--data-dir', join(dataDir, 'member'),
    '--listen-client-urls', endpoint,
    '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peer,
    '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `trove-test=${peer}`,
    '--log-level', 'warn',
  ];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';

  const running = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;

  const launch = async (): Promise<void> => {
    const current = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = current;
    const append = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEEP);
    };
    current.stdout!.on('data', append);
    current.stderr!.on('data', append);
    exited = new Promise((resolveExit) => current.once('exit', () => resolveExit()));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!running()) throw new Error(`etcd exited before it was ready:\n${output}`);
      try {
        const response = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
        const body = (await response.json()) as { health?: string };
        if (response.ok && body.health === 'true') return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    current.kill('SIGKILL');
    throw new Error(`etcd did not become healthy within ${READY_TIMEOUT_MS} ms:\n${output}`);
  };

  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    if (!running()) return;
    child!.kill(signal);
    await exited;
  };

  try {
    await launch();
  } catch (error) {
    await kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint,
    output: () => output,
    running,
    stop: () => kill('SIGTERM'),
    kill,
    restart: async () => {
      await kill('SIGKILL');
      await launch();
    },
    cleanup: async () => {
      await kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A TCP proxy in front of etcd: `cut()` drops its connections and refuses new ones until `heal()`. */
export interface TcpProxy {
  /** URL to give the client instead of etcd's. */
  readonly endpoint: string;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

/** Starts a TCP proxy on a free 127.0.0.1 port forwarding to `target` (`http://host:port`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listenPort = await new Promise<number>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolveListen(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
  return {
    endpoint: `http://127.0.0.1:${listenPort}`,
    cut: () => {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    heal: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    },
  };
}

/**
 * Starts `count` Trove nodes (`node-1`…) of cluster `clusterName` on `etcd`, adding each to `into`
 * as it starts (so a suite's cleanup finds them even when a later one fails), and waits until
 * every node counts all of them. `options(index)` adds settings or environment to one node.
 */
export async function startEtcdNodes(
  etcd: EtcdServer,
  count: number,
  clusterName: string,
  into: TroveServer[],
  options: (index: number) => StartOptions = () => ({}),
): Promise<TroveServer[]> {
  const started: TroveServer[] = [];
  for (let index = 0; index < count; index++) {
    const extra = options(index);
    const node = await startServer({ ...extra, settings: { 'cluster.etcd': etcd.endpoint, 'cluster.name': clusterName, 'node.name': `node-${index + 1}`, ...extra.settings } });
    into.push(node);
    started.push(node);
  }
  await everyNodeSees(started, count);
  return started;
}

/** Resolves once `_cluster/health` on each of `nodes` counts `count` nodes. */
export async function everyNodeSees(nodes: readonly TroveServer[], count: number, timeoutMs?: number): Promise<void> {
  await until(
    async () => ((await Promise.all(nodes.map(async (node) => (await call(node, 'GET', '/_cluster/health')).body.number_of_nodes))).every((seen) => seen === count) ? true : undefined),
    `every node sees ${count} nodes`,
    timeoutMs,
  );
}
