/**
 * Starts Sphinx's `searchd` (Debian `sphinxsearch`, 2.2) as a server peer of the HTTP suite: a
 * generated config with one real-time index of the e-mails' `body` field, listening for SphinxQL
 * (MySQL protocol) on a free loopback port, with everything in a temporary directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { readNdjsonBatches } from '../corpora/ndjson.ts';
import type { CorpusDocument } from '../peers/harness.ts';
import { freePort, logTail, stopChild } from './server-process.ts';

/** A running `searchd` and one SphinxQL connection to it. */
export interface SphinxServer {
  connection: mysql.Connection;
  /** Version line of `searchd`. */
  version: string;
  stop(): Promise<void>;
}

/** The real-time index the e-mails are loaded into. */
export const SPHINX_INDEX = 'emails';

const READY_TIMEOUT_MS = 30_000;
const INSERT_BATCH = 500;

/** The version line of `searchd`, or null when it is not on the PATH. */
export function sphinxVersion(): string | null {
  const probe = spawnSync('searchd', ['--help'], { encoding: 'utf8' });
  if (probe.error) return null;
  return (probe.stdout || '').split('\n')[0]?.trim() || 'searchd';
}

function config(dir: string, port: number): string {
  return [
    `index ${SPHINX_INDEX}`,
    '{',
    '  type = rt',
    `  path = ${path.join(dir, 'index', SPHINX_INDEX)}`,
    '  rt_field = body',
    '  rt_attr_uint = replica',
    '  rt_mem_limit = 1024M',
    '  dict = keywords',
    '  min_word_len = 1',
    '}',
    'searchd',
    '{',
    `  listen = 127.0.0.1:${port}:mysql41`,
    `  log = ${path.join(dir, 'searchd.log')}`,
    `  pid_file = ${path.join(dir, 'searchd.pid')}`,
    `  binlog_path = ${path.join(dir, 'binlog')}`,
    '  workers = threads',
    '  max_matches = 1000',
    '}',
    '',
  ].join('\n');
}

/** Starts `searchd --nodetach` in `dir` on a free port and connects to it once it accepts SphinxQL. */
export async function startSphinx(dir: string): Promise<SphinxServer> {
  const version = sphinxVersion() ?? 'searchd';
  for (const sub of ['index', 'binlog']) mkdirSync(path.join(dir, sub), { recursive: true });
  const port = await freePort();
  const configFile = path.join(dir, 'sphinx.conf');
  writeFileSync(configFile, config(dir, port));
  const outFile = path.join(dir, 'searchd.out');
  const outFd = openSync(outFile, 'a');
  const child = spawn('searchd', ['--config', configFile, '--nodetach'], { cwd: dir, stdio: ['ignore', outFd, outFd] });
  closeSync(outFd);
  const stop = (): Promise<void> => stopChild(child);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`searchd exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${logTail(outFile)}\n${logTail(path.join(dir, 'searchd.log'))}`);
    }
    try {
      const connection = await mysql.createConnection({ host: '127.0.0.1', port });
      return {
        connection,
        version,
        async stop(): Promise<void> {
          await connection.end().catch(() => undefined);
          await stop();
        },
      };
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`searchd not ready after ${READY_TIMEOUT_MS} ms (${(error as Error).message}):\n${logTail(outFile)}`);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Inserts the first `docs` e-mails of the corpus (`body` only, document ids 1..docs) in batches
 * of a few hundred rows, then flushes the RAM chunk to disk; returns the load time in ms.
 */
export async function loadSphinx(server: SphinxServer, corpusPath: string, docs: number): Promise<number> {
  const started = performance.now();
  let nextId = 1;
  for await (const lines of readNdjsonBatches(corpusPath, INSERT_BATCH, docs)) {
    const rows: Array<[number, string, number]> = [];
    for (const line of lines) {
      const { source } = JSON.parse(line) as CorpusDocument;
      rows.push([nextId++, String((source as { body?: unknown }).body ?? ''), 0]);
    }
    await server.connection.query(`INSERT INTO ${SPHINX_INDEX} (id, body, replica) VALUES ?`, [rows]);
  }
  await server.connection.query(`FLUSH RAMCHUNK ${SPHINX_INDEX}`);
  return performance.now() - started;
}
