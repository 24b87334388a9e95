/**
 * `trove cluster up --nodes 3`: one command to try a cluster on one machine. Starts a local etcd
 * (the `etcd` binary on PATH, Debian package `etcd-server`) with its data under
 * `<data>/etcd`, then N nodes on consecutive HTTP ports with their data under `<data>/node-N`,
 * prints their URLs and the admin key file, and stops everything on Ctrl-C (SIGINT or SIGTERM).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { request } from 'undici';

/** Options of `trove cluster up`. */
export interface ClusterUpOptions {
  nodes: number;
  /** HTTP port of the first node; node N listens on `port + N - 1`. */
  port: number;
  /** Client port of etcd; its peer port is the next one. */
  etcdPort: number;
  data: string;
  name: string;
}

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;
/** The entry that starts a node: from source, the `trove` launcher (it registers tsx); built, main.js. */
const ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../bin/trove.js' : './main.js', import.meta.url));

/** True when `etcd` can be started from PATH. */
function etcdAvailable(): boolean {
  return spawnSync('etcd', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts a child whose output goes to this terminal, prefixed with its name. Children get a process
 * group of their own, so that Ctrl-C reaches only this command, which then stops the nodes before
 * etcd (a node deregisters through etcd on its way out).
 */
function startChild(name: string, command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const prefix = (chunk: Buffer): string =>
    chunk
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => `[${name}] ${line}\n`)
      .join('');
  child.stdout?.on('data', (chunk: Buffer) => process.stdout.write(prefix(chunk)));
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(prefix(chunk)));
  return child;
}

/** Resolves once `url` answers any HTTP status, or throws after the timeout or when `child` exits. */
async function waitForHttp(url: string, child: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      const response = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 });
      await response.body.dump();
      return;
    } catch {
      await sleep(200);
    }
  }
  throw new Error(`${what} did not answer at ${url} within ${READY_TIMEOUT_MS / 1000} s`);
}

/** Stops children (SIGTERM, then SIGKILL after a grace period), last started first. */
async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
}

/** Runs the cluster until SIGINT or SIGTERM; returns the exit code. */
export async function clusterUp(options: ClusterUpOptions): Promise<number> {
  if (!etcdAvailable()) {
    process.stderr.write('trove cluster up needs etcd on PATH: install it with `sudo apt-get install etcd-server`\n');
    return 1;
  }
  const data = resolve(options.data);
  const etcdDir = join(data, 'etcd');
  mkdirSync(etcdDir, { recursive: true });
  const etcdUrl = `http://127.0.0.1:${options.etcdPort}`;
  const peerUrl = `http://127.0.0.1:${options.etcdPort + 1}`;
  const children: ChildProcess[] = [];
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('stopping the cluster...\n');
    await stopAll(children);
  };
  const stopped = new Promise<void>((resolveStopped) => {
    const onSignal = (): void => void stop().then(resolveStopped);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  try {
    const etcd = startChild('etcd', 'etcd', [
      '--name', `${options.name}-etcd`,
      '--data-dir', etcdDir,
      '--listen-client-urls', etcdUrl,
      '--advertise-client-urls', etcdUrl,
      '--listen-peer-urls', peerUrl,
      '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', `${options.name}-etcd=${peerUrl}`,
      '--log-level', 'warn',
    ]);
    children.push(etcd);
    await waitForHttp(`${etcdUrl}/health`, etcd, 'etcd');
    const urls: string[] = [];
    for (let index = 1; index <= options.nodes; index++) {
      const port = options.port + index - 1;
      const node = startChild(`node-${index}`, process.execPath, [
        ENTRY,
        'start',
        '--cluster.etcd', etcdUrl,
        '--cluster.name', options.name,
        '--node.name', `node-${index}`,
        '--http.port', String(port),
        '--path.data', join(data, `node-${index}`),
      ]);
      children.push(node);
      urls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(urls.map((url, index) => waitForHttp(url, children[index + 1]!, `node-${index + 1}`)));
    const keyFile = urls.map((_, index) => join(data, `node-${index + 1}`, 'bootstrap-admin.key')).find((file) => existsSync(file));
    process.stdout.write(
      [
        `cluster [${options.name}] is up: etcd at ${etcdUrl}`,
        ...urls.map((url, index) => `  node-${index + 1}: ${url}`),
        keyFile ? `admin key: ${keyFile} (e.g. curl -H "Authorization: Bearer $(cat ${keyFile})" ${urls[0]}/_cluster/health)` : 'admin key: set by TROVE_API_KEY or created by an earlier run',
        'press Ctrl-C to stop every node and etcd',
        '',
      ].join('\n'),
    );
    await stopped;
    return 0;
  } catch (error) {
    process.stderr.write(`trove cluster up: ${(error as Error).message}\n`);
    await stop();
    return 1;
  }
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`expected a positive integer, got [${value}]`);
  return parsed;
}

/** Adds `trove cluster up` to the command line. */
export function registerClusterCommand(program: Command): void {
  const cluster = program.command('cluster').description('local clusters for trying Trove on one machine');
  cluster
    .command('up')
    .description('start a local etcd and N nodes on consecutive ports; Ctrl-C stops them all')
    .option('--nodes <n>', 'number of nodes', positiveInteger, 3)
    .option('--port <port>', 'HTTP port of the first node', positiveInteger, 9200)
    .option('--etcd-port <port>', 'client port of etcd (its peer port is the next one)', positiveInteger, 2379)
    .option('--data <dir>', 'data directory (etcd/ and node-N/ inside)', './data')
    .option('--name <name>', 'cluster name', 'local')
    .action(async (options: ClusterUpOptions) => {
      process.exitCode = await clusterUp(options);
    });
}
