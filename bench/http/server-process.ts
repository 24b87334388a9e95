/** Starts a real Trove server process for the HTTP suite and stops it again. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { REPO_ROOT } from '../worker-process.ts';

/** A running server and how to reach it. */
export interface ServerProcess {
  origin: string;
  /** Its stdout and stderr, for diagnostics. */
  logFile: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;

/** A TCP port that was free a moment ago on the loopback interface. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  server.close();
  await once(server, 'close');
  return port;
}

/** The last lines of a log file, for an error message ('' if it cannot be read). */
export function logTail(logFile: string): string {
  try {
    return readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

async function waitReady(origin: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${logTail(logFile)}`);
    }
    try {
      const response = await request(`${origin}/`);
      await response.body.text();
      if (response.statusCode === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`server not ready after ${READY_TIMEOUT_MS} ms:\n${logTail(logFile)}`);
}

/** Starts `trove start` on a free port with security off and waits until `GET /` answers; `settings` adds flags. */
export async function startServer(dataDir: string, settings: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort();
  mkdirSync(dataDir, { recursive: true });
  const logFile = path.join(dataDir, 'server.log');
  const logFd = openSync(logFile, 'a');
  const args = [
    '--import',
    'tsx',
    path.join(REPO_ROOT, 'src', 'cli', 'main.ts'),
    'start',
    '--http.port',
    String(port),
    '--path.data',
    path.join(dataDir, 'node'),
    '--security.enabled',
    'false',
    '--log.level',
    'warn',
    ...Object.entries(settings).flatMap(([key, value]) => [`--${key}`, value]),
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitReady(origin, child, logFile);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    origin,
    logFile,
    stop: () => stopChild(child),
  };
}

/** Sends SIGTERM to a child process (SIGKILL if it has not exited after a while) and waits for its exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
