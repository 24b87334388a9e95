/**
 * What `trove start` says when the node cannot start: one line on stderr naming the cause in
 * plain words (data path in use, a bad setting, the port taken, ...) and exit code 1. The stack
 * trace goes to the log at debug level only, under the `start` target (`--log.level warn,start=debug`).
 */
import type { Logger } from 'pino';

/** Values of the start-up configuration a failure message may name. */
export interface StartFailureContext {
  host: string;
  port: number;
}

/** The first line of an error's message (some libraries append multi-line excerpts). */
function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '')?.trim() ?? text;
}

/** The one-line reason a start failed, in plain words. */
export function describeStartFailure(error: unknown, context: StartFailureContext): string {
  if (!(error instanceof Error)) return firstLine(String(error));
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  if (syscall === 'listen' && code === 'EADDRINUSE') {
    return `port ${context.port} on ${context.host} is already in use by another program; stop it or choose another port with --http.port`;
  }
  if (syscall === 'listen' && code === 'EACCES') {
    return `not allowed to listen on port ${context.port} of ${context.host}; choose a port above 1023 with --http.port`;
  }
  if (code === 'EACCES' || code === 'EPERM') return `permission denied on ${path ?? 'a file of the data path'}; check --path.data and its owner`;
  return firstLine(error.message);
}

/** Prints the one-line reason on stderr (the stack at debug level in the log) and exits 1. */
export function failStart(reason: string, error?: unknown, logger?: Logger): never {
  if (error !== undefined) logger?.debug({ err: error }, 'start failure');
  process.stderr.write(`trove: cannot start: ${reason}\n`);
  process.exit(1);
}
