/**
 * End-to-end test harness: starts a real Trove server process on a free port bound to
 * 127.0.0.1 with its own data directory, waits until it answers `GET /`, and can kill it
 * (any signal), restart it on the same data and port, and clean up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request as undiciRequest } from 'undici';

/** Root of the repository (the harness runs the server from source). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

const MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts');
// Generous: a loaded 2-core machine can take a long time to load the server through tsx.
const READY_TIMEOUT_MS = 120_000;
const OUTPUT_KEEP = 64 * 1024;

/** Options of a test server. */
export interface StartOptions {
  /** Extra `--key value` settings, e.g. `{'http.max_content_length': '64kb'}`. */
  settings?: Record<string, string>;
  /** Start with API keys required (`security.enabled: true`); off by default so suites need no key. */
  security?: boolean;
  /** Extra environment variables of the server process, e.g. `{TROVE_API_KEY: '...'}`. */
  env?: Record<string, string>;
  /** The process's open-file limit (soft and hard, set through the shell's `ulimit -n`). */
  maxOpenFiles?: number;
}

/** A running (or stopped) Trove server process under test. */
export interface TroveServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The process id of the current server process. */
  pid(): number | undefined;
  /** The last 64 KiB of the process' stdout and stderr, for diagnostics. */
  output(): string;
  /** The admin key a first start with security on wrote to `<dataDir>/bootstrap-admin.key`. */
  bootstrapKey(): Promise<string>;
  /** Sends a signal and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same data directory and port; waits for readiness. */
  restart(): Promise<void>;
  /** Stops the process (SIGKILL if it is still running) and removes the data directory. */
  cleanup(): Promise<void>;
}

/** Finds a TCP port that is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether `port` on 127.0.0.1 can be bound now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

/** The first of `count` consecutive ports that are free on 127.0.0.1 now (for commands that take a base port). */
export async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const first = await freePort();
    let free = first + count - 1 <= 65_535;
    for (let offset = 1; free && offset < count; offset++) free = await portIsFree(first + offset);
    if (free) return first;
  }
  throw new Error(`no run of ${count} free ports found in 100 attempts`);
}

/**
 * Shard workers of the servers under test: `TROVE_TEST_SHARD_WORKERS` (the test script runs the
 * end-to-end suites once with 2 and once with 0), else 2, so that shards run in worker threads
 * even on a one-core machine.
 */
export const TEST_SHARD_WORKERS = process.env.TROVE_TEST_SHARD_WORKERS ?? '2';

/** Starts a Trove server on a free port with a fresh data directory. */
export async function startServer(options: StartOptions = {}): Promise<TroveServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'trove-e2e-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const settings: Record<string, string> = {
    'http.host': '127.0.0.1',
    'http.port': String(port),
    'path.data': dataDir,
    'security.enabled': options.security === true ? 'true' : 'false',
    'log.level': 'warn',
    'node.shard_workers': TEST_SHARD_WORKERS,
    ...options.settings,
  };
  const args = ['--import', 'tsx', MAIN, 'start'];
  for (const [key, value] of Object.entries(settings)) args.push(`--${key}`, value);

  let child: ChildProcess | undefined;
  let output = '';
  let exited: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    const [command, commandArgs] =
      options.maxOpenFiles === undefined
        ? [process.execPath, args]
        : ['/bin/sh', ['-c', `ulimit -n ${options.maxOpenFiles} && exec "$0" "$@"`, process.execPath, ...args]];
    const current = spawn(command, commandArgs, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    child = current;
    const append = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEEP);
    };
    current.stdout!.on('data', append);
    current.stderr!.on('data', append);
    exited = new Promise((resolveExit) => current.once('exit', () => resolveExit()));
    let running = true;
    void exited.then(() => {
      running = false;
    });
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!running) throw new Error(`Trove exited before it was ready:\n${output}`);
      try {
        const response = await undiciRequest(`${url}/`, { method: 'GET' });
        await response.body.dump();
        // 401: the server is up and wants an API key (security on).
        if (response.statusCode === 200 || response.statusCode === 401) return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    current.kill('SIGKILL');
    throw new Error(`Trove did not answer GET / within ${READY_TIMEOUT_MS} ms:\n${output}`);
  };

  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };

  try {
    await launch();
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    port,
    dataDir,
    pid: () => child?.pid,
    output: () => output,
    bootstrapKey: async () => (await readFile(join(dataDir, 'bootstrap-admin.key'), 'utf8')).trim(),
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

/** A decoded HTTP response: status, headers and the body (parsed when it is JSON). */
export interface HttpResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

/** Request options: a JSON `json` body, or a raw `body` string with its own content type. */
export interface CallOptions {
  json?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
}

/** Sends one HTTP request to the server and decodes the answer. */
export async function call<T = any>(
  server: { url: string },
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await undiciRequest(`${server.url}${path}`, { method: method as 'GET', headers, body });
  const text = await response.body.text();
  const contentType = String(response.headers['content-type'] ?? '');
  let decoded: unknown = text;
  if (contentType.includes('json') && text !== '') decoded = JSON.parse(text);
  return { status: response.statusCode, headers: response.headers, body: decoded as T, text };
}

/** Builds an NDJSON `_bulk` body from action/source objects. */
export function ndjson(lines: unknown[]): string {
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

/**
 * Sends a body the server is expected to refuse before reading it all (e.g. 413): headers first,
 * then the chunks one by one, stopping as soon as a response arrives. Write errors after the
 * response (the server closing the connection) are ignored.
 */
export async function sendRefusable(
  server: { url: string },
  method: string,
  path: string,
  chunks: Buffer[],
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    let responded = false;
    const request = httpRequest(`${server.url}${path}`, { method, headers }, (response) => {
      responded = true;
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve({ status: response.statusCode ?? 0, body: text === '' ? null : JSON.parse(text) });
      });
    });
    request.on('error', (error) => {
      if (!responded) reject(error);
    });
    request.flushHeaders();
    void (async () => {
      await sleep(100);
      for (const chunk of chunks) {
        if (responded || request.destroyed) return;
        await new Promise<void>((written) => request.write(chunk, () => written()));
        await sleep(5);
      }
      if (!responded && !request.destroyed) request.end();
    })();
  });
}

/**
 * Polls `probe` every 100 ms until it returns a value (not undefined); a probe that throws (a node
 * still starting or restarting) counts as not yet. Throws naming `what`, and the probe's last
 * error, after `timeoutMs`.
 */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting until ${what}${lastError === undefined ? '' : ` (last error: ${(lastError as Error).message ?? String(lastError)})`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
