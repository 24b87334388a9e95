/**
 * The node's own files under `path.data`: `node.json` (the node id, generated once and kept for
 * life, `{"format": "trove-node", "version": 1, "nodeId", "createdAt"}`) and the data-path lock, so
 * two live processes never share one data path.
 *
 * The lock is a listening unix domain socket, `<path.data>/node.lock.sock`: the kernel closes it
 * when its process dies (kill -9 included, before the process is even reaped), so a restart right
 * after a crash always starts. A second process checks liveness by connecting: refused (a file
 * left by a dead process) means stale, so it is removed and taken over; accepted means in use, and
 * the holder answers with its pid for the error message. On Linux the process first binds an
 * abstract socket named after the data directory's device and inode: that bind is atomic, so two
 * processes starting at once can never both take over the same stale file. (Abstract names are
 * per network namespace; the file socket still guards processes of other namespaces sharing the
 * directory.) A data path too long for a socket address (about 107 bytes) is reached through
 * `/proc/self/fd/<descriptor of the directory>` on Linux.
 *
 * Modes: the data path is made 0700 (tightened when it exists with wider modes), and
 * `restrictFileModes` sets the process umask to 077 so that every file a node creates is 0600.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { writeFileAtomic } from '../engine/directory/atomic-file.ts';

/** The persisted identity of a node. */
export interface NodeIdentity {
  /** 22-character URL-safe random id, stable across restarts. */
  nodeId: string;
  /** Epoch millis of the first start. */
  createdAt: number;
}

/** A held data-path lock. */
export interface DataPathLock {
  /** Closes the lock sockets and removes the socket file. */
  release(): Promise<void>;
}

/** File name of the lock socket under `path.data`. */
export const LOCK_SOCKET_FILE = 'node.lock.sock';
/** The pid lock file of earlier versions, removed when found. */
const LEGACY_LOCK_FILE = 'node.lock';
/** Longest socket path the platform's `sockaddr_un` takes (108 bytes on Linux, 104 on macOS, minus the NUL). */
const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;
/** How long a contender waits for a live holder to say its pid. */
const HOLDER_REPLY_MS = 1000;
/** Directory and file modes of the data path: this user only. */
const DATA_DIR_MODE = 0o700;
const PRIVATE_UMASK = 0o077;

const IDENTITY_FORMAT = 'trove-node';
const IDENTITY_VERSION = 1;
/** Data paths this process holds locked (by their lock socket file). */
const heldLocks = new Set<string>();

/** An error of the data-path lock: the path is in use, or the lock cannot be taken. */
export class DataPathLockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataPathLockError';
  }
}

/** Makes every file and directory this process creates from now on private to its user (umask 077). */
export function restrictFileModes(): void {
  process.umask(PRIVATE_UMASK);
}

/** Creates the data path (mode 0700) or tightens an existing one that others may read. */
export async function prepareDataPath(dataPath: string): Promise<void> {
  await mkdir(dataPath, { recursive: true, mode: DATA_DIR_MODE });
  const { mode } = await stat(dataPath);
  if ((mode & 0o077) === 0) return;
  try {
    await chmod(dataPath, DATA_DIR_MODE);
  } catch (error) {
    // A directory owned by another user: the node can still use it if it may write there.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}

/** Reads `<path.data>/node.json`, creating it with a new node id on first start. */
export async function loadNodeIdentity(dataPath: string): Promise<NodeIdentity> {
  await prepareDataPath(dataPath);
  const file = join(dataPath, 'node.json');
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== null) return parseIdentity(file, text);
  const identity: NodeIdentity = { nodeId: randomBytes(16).toString('base64url'), createdAt: Date.now() };
  await writeFileAtomic(file, `${JSON.stringify({ format: IDENTITY_FORMAT, version: IDENTITY_VERSION, ...identity })}\n`, { mode: 0o600 });
  return identity;
}

/** Checks and decodes the text of `node.json`. */
function parseIdentity(file: string, text: string): NodeIdentity {
  let document: { format?: unknown; version?: unknown; nodeId?: unknown; createdAt?: unknown };
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`node identity file ${file} is damaged: ${(error as Error).message}`);
  }
  if (document.format !== IDENTITY_FORMAT || typeof document.nodeId !== 'string' || typeof document.createdAt !== 'number') {
    throw new Error(`node identity file ${file} is damaged: missing format, nodeId or createdAt`);
  }
  if (typeof document.version !== 'number' || document.version > IDENTITY_VERSION) {
    throw new Error(`node identity file ${file} has unsupported version ${String(document.version)}`);
  }
  return { nodeId: document.nodeId, createdAt: document.createdAt };
}

/**
 * Takes the data-path lock for this process (see the module comment). A lock left by a dead
 * process is taken over; one held by a live process is a DataPathLockError naming its pid.
 */
export async function lockDataPath(dataPath: string): Promise<DataPathLock> {
  await prepareDataPath(dataPath);
  const file = join(dataPath, LOCK_SOCKET_FILE);
  if (heldLocks.has(file)) throw new DataPathLockError(`data path ${dataPath} is already in use by this process`);
  heldLocks.add(file);
  const servers: Server[] = [];
  const address = await SocketAddress.open(dataPath);
  try {
    const gate = await abstractGateName(dataPath);
    if (gate !== null) servers.push(await listenOrRefuse(gate, dataPath));
    servers.push(await takeLockSocket(address.path, dataPath));
    await rm(join(dataPath, LEGACY_LOCK_FILE), { force: true });
  } catch (error) {
    await closeAll(servers);
    address.close();
    heldLocks.delete(file);
    throw error;
  }
  let released: Promise<void> | null = null;
  return {
    release: () => {
      released ??= (async () => {
        // Closing a listening socket also removes its file (libuv unlinks it).
        await closeAll(servers);
        address.close();
        await rm(file, { force: true });
        heldLocks.delete(file);
      })();
      return released;
    },
  };
}

/** The address the lock socket is bound and reached at: its file path, or a short alias of it. */
class SocketAddress {
  private constructor(
    readonly path: string,
    private readonly directoryFd: number | null,
  ) {}

  /** The plain path when it fits a socket address, else `/proc/self/fd/<fd>/node.lock.sock` (Linux). */
  static async open(dataPath: string): Promise<SocketAddress> {
    const plain = join(dataPath, LOCK_SOCKET_FILE);
    if (Buffer.byteLength(plain) <= MAX_SOCKET_PATH_BYTES) return new SocketAddress(plain, null);
    if (process.platform !== 'linux') {
      throw new DataPathLockError(`data path ${dataPath} is too long for its lock socket (at most ${MAX_SOCKET_PATH_BYTES - LOCK_SOCKET_FILE.length - 1} bytes); choose a shorter --path.data`);
    }
    const fd = openSync(dataPath, 'r');
    return new SocketAddress(`/proc/self/fd/${fd}/${LOCK_SOCKET_FILE}`, fd);
  }

  /** Closes the directory descriptor an alias needs (after the sockets are closed). */
  close(): void {
    if (this.directoryFd !== null) closeSync(this.directoryFd);
  }
}

/** On Linux, the abstract socket name of the data directory (its device and inode); else null. */
async function abstractGateName(dataPath: string): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  const { dev, ino } = await stat(dataPath, { bigint: true });
  return `\0trove-data-path/${dev}/${ino}`;
}

/** Binds the lock socket file, taking over a stale one; refuses when a live process holds it. */
async function takeLockSocket(path: string, dataPath: string): Promise<Server> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await listenOn(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
    const holder = await probeHolder(path);
    if (holder !== null) throw inUseError(dataPath, holder);
    await rm(path, { force: true });
  }
  throw new DataPathLockError(`could not lock data path ${dataPath}: its lock socket keeps changing hands`);
}

/** Binds an address (the abstract gate) or refuses naming the live holder. */
async function listenOrRefuse(address: string, dataPath: string): Promise<Server> {
  try {
    return await listenOn(address);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  }
  throw inUseError(dataPath, (await probeHolder(address)) ?? 'unknown');
}

function inUseError(dataPath: string, holder: string): DataPathLockError {
  const who = holder === 'unknown' ? '' : ` (pid ${holder})`;
  return new DataPathLockError(`data path ${dataPath} is in use by another Trove process${who}; stop it or choose another --path.data`);
}

/** Listens on a unix socket address; every connection is answered with this process' pid. */
function listenOn(address: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(`trove ${process.pid}\n`);
    });
    server.once('error', reject);
    server.listen(address, () => {
      server.off('error', reject);
      server.unref();
      resolve(server);
    });
  });
}

/**
 * Connects to a lock socket: null when nobody listens (refused, or the file is gone), else the
 * holder's pid as it answers (`unknown` if it does not answer in time).
 */
function probeHolder(address: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(address);
    let reply = '';
    let connected = false;
    const timer = setTimeout(() => socket.destroy(), HOLDER_REPLY_MS);
    socket.setEncoding('utf8');
    socket.on('connect', () => (connected = true));
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      if (connected) resolve(/^trove (\d+)\n/.exec(reply)?.[1] ?? 'unknown');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (connected) return;
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(null);
      else reject(error);
    });
  });
}

async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
}
