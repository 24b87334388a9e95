/**
 * The node's own files under `path.data`: `node.json` (the node id, generated once and kept for
 * life, `{"format": "trove-node", "version": 1, "nodeId", "createdAt"}`) and `node.lock` (the pid of
 * the process using the data path, so two nodes never share one).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
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
  /** Removes the lock file. */
  release(): Promise<void>;
}

const IDENTITY_FORMAT = 'trove-node';
/** Lock files this process holds (a pid in a lock file may equal ours after a restart in a container). */
const heldLocks = new Set<string>();
const IDENTITY_VERSION = 1;

/** Reads `<path.data>/node.json`, creating it with a new node id on first start. */
export async function loadNodeIdentity(dataPath: string): Promise<NodeIdentity> {
  await mkdir(dataPath, { recursive: true });
  const file = join(dataPath, 'node.json');
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== null) {
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
  const identity: NodeIdentity = { nodeId: randomBytes(16).toString('base64url'), createdAt: Date.now() };
  await writeFileAtomic(file, `${JSON.stringify({ format: IDENTITY_FORMAT, version: IDENTITY_VERSION, ...identity })}\n`);
  return identity;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<path.data>/node.lock` for this process. A lock left by a process that no longer runs
 * (a crash) is taken over; one held by a live process is an error naming its pid.
 */
export async function lockDataPath(dataPath: string): Promise<DataPathLock> {
  await mkdir(dataPath, { recursive: true });
  const file = join(dataPath, 'node.lock');
  if (heldLocks.has(file)) throw new Error(`data path ${dataPath} is already in use by this process`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o644);
      try {
        await handle.writeFile(`${process.pid}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      heldLocks.add(file);
      return {
        release: async () => {
          if (!heldLocks.delete(file)) return;
          await rm(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(holder) && holder !== process.pid && processIsAlive(holder)) {
      throw new Error(`data path ${dataPath} is in use by another Trove process (pid ${holder})`);
    }
    await rm(file, { force: true });
  }
  throw new Error(`could not lock data path ${dataPath}`);
}
