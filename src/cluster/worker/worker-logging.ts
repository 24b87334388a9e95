/** Shard log lines of a worker thread, carried to the main thread's logger. */
import type { MessagePort } from 'node:worker_threads';
import { pino, type Level, type Logger } from 'pino';
import type { LogMessage } from './protocol.ts';

const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/** A worker's logger: each serialized line is posted to the main thread. */
export function createPortLogger(port: MessagePort, level: string): Logger {
  const post = (line: string): void => port.postMessage({ type: 'log', line } satisfies LogMessage);
  return pino({ level, base: null, timestamp: false }, { write: post });
}

/** Logs a line of a worker's logger again on `logger`, at its level. */
export function relogWorkerLine(logger: Logger, line: string): void {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    logger.warn({ line }, 'unreadable log line from a shard worker');
    return;
  }
  const { level, msg, ...fields } = entry;
  const label = typeof level === 'number' ? pino.levels.labels[level] : undefined;
  const method = (label !== undefined && LEVELS.includes(label) ? label : 'info') as Level;
  if (typeof msg === 'string') logger[method](fields, msg);
  else logger[method](fields);
}
