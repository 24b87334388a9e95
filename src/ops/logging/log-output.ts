/**
 * Where and how the node's root logger writes (`log.format`): JSON lines (`json`, for machines
 * and log shippers), or one coloured human-readable line per event (`pretty`, through
 * pino-pretty's formatter used in-process, not as a worker transport, so it runs under tsx too).
 * `auto` is pretty when stdout is a terminal and JSON otherwise. Both write synchronously, so the
 * last lines before `process.exit` are never lost.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogFormat } from '../../config/load-config.ts';

/** Options of `createRootLogger`. */
export interface RootLoggerOptions {
  /** pino level of the root logger. */
  level: string;
  /** Name of the node, bound to every JSON line as `node`. */
  nodeName: string;
  format: LogFormat;
  /** Where lines go (default: stdout); its `isTTY` decides `auto` and colours. */
  output?: { fd: number; isTTY?: boolean };
}

/** The format `auto` resolves to for an output: pretty on a terminal, else JSON. */
export function effectiveLogFormat(format: LogFormat, isTTY: boolean): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return isTTY ? 'pretty' : 'json';
}

/** Creates the node's root logger in the format `log.format` asks for. */
export function createRootLogger(options: RootLoggerOptions): Logger {
  const output = options.output ?? process.stdout;
  const destination = pino.destination({ dest: output.fd, sync: true });
  const settings = { level: options.level, base: { node: options.nodeName } };
  if (effectiveLogFormat(options.format, output.isTTY === true) === 'json') return pino(settings, destination);
  return pino(settings, prettyStream(destination, output.isTTY === true));
}

/** A stream that turns each JSON line into one pretty line (coloured on a terminal) and writes it. */
export function prettyStream(destination: DestinationStream, colorize: boolean): DestinationStream {
  const format = prettyFactory({
    colorize,
    singleLine: true,
    // Errors too stay on their line, their stack JSON-escaped, rather than a multi-line block.
    errorLikeObjectKeys: [],
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,node,component',
    messageFormat: '{if component}[{component}] {end}{msg}',
  });
  return { write: (line: string) => destination.write(format(withoutRepeatedFields(line))) };
}

/** Fields every pretty line shows in its own way (or hides), never as a repeated field. */
const KEPT_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'node', 'component', 'err']);

/**
 * A log line without the string fields its message already says as a word of its own (a path, an
 * address, an id): on a terminal they would only repeat it. A line that is not JSON stays as is.
 */
export function withoutRepeatedFields(line: string): string | Record<string, unknown> {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const said = new Set((typeof entry.msg === 'string' ? entry.msg : '').split(/[\s()[\]{},;"']+/));
  for (const [key, value] of Object.entries(entry)) {
    if (!KEPT_FIELDS.has(key) && typeof value === 'string' && said.has(value)) delete entry[key];
  }
  return entry;
}
