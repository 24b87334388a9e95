/**
 * Value types of node settings and their parsers. A parser accepts what a YAML file, an
 * environment variable or a command-line flag can hold (typed YAML scalars or plain strings)
 * and returns the typed value, or throws an Error whose message says what was expected.
 */

/** The kinds of value a node setting can hold. */
export type SettingType = 'string' | 'integer' | 'boolean' | 'bytes' | 'list' | 'log_level';

/** The TypeScript type of each setting type's parsed value. */
export interface SettingTypeValue {
  string: string;
  integer: number;
  boolean: boolean;
  bytes: number;
  list: string[];
  log_level: string;
}

/** Any parsed setting value. */
export type SettingValue = SettingTypeValue[SettingType];

/** Inclusive numeric bounds of an `integer` or `bytes` setting. */
export interface SettingBounds {
  min?: number;
  max?: number;
}

const BYTE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
  tb: 1024 ** 4,
};

/** Log levels pino understands, in increasing severity (`silent`, or its synonym `off`, turns logging off). */
export const LOG_LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent', 'off'];

function describe(raw: unknown): string {
  return typeof raw === 'string' ? `"${raw}"` : JSON.stringify(raw) ?? String(raw);
}

function checkBounds(value: number, bounds: SettingBounds): number {
  if (bounds.min !== undefined && value < bounds.min) {
    throw new Error(`must be at least ${bounds.min}, got ${value}`);
  }
  if (bounds.max !== undefined && value > bounds.max) {
    throw new Error(`must be at most ${bounds.max}, got ${value}`);
  }
  return value;
}

/** Parses a whole number given as a number or a decimal string. */
export function parseInteger(raw: unknown, bounds: SettingBounds = {}): number {
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw)) value = Number(raw);
  else throw new Error(`expected an integer, got ${describe(raw)}`);
  if (!Number.isSafeInteger(value)) throw new Error(`expected an integer, got ${describe(raw)}`);
  return checkBounds(value, bounds);
}

/** Parses `true`/`false` given as a boolean or a string. */
export function parseBoolean(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string') {
    const text = raw.trim().toLowerCase();
    if (text === 'true') return true;
    if (text === 'false') return false;
  }
  throw new Error(`expected true or false, got ${describe(raw)}`);
}

/** Parses a byte size: a number of bytes or a string such as `100mb`, `512kb`, `1gb`, `4096b`. */
export function parseBytes(raw: unknown, bounds: SettingBounds = {}): number {
  if (typeof raw === 'number') return checkBounds(parseInteger(raw), bounds);
  if (typeof raw === 'string') {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?b)?\s*$/i.exec(raw);
    if (match) {
      const unit = BYTE_UNITS[(match[2] ?? 'b').toLowerCase()];
      const value = Math.round(Number(match[1]) * unit);
      if (Number.isSafeInteger(value)) return checkBounds(value, bounds);
    }
  }
  throw new Error(`expected a byte size such as 100mb or a number of bytes, got ${describe(raw)}`);
}

/** Parses a non-empty string (numbers from YAML are accepted and turned into strings). */
export function parseString(raw: unknown): string {
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  if (typeof raw === 'string' && raw.trim() !== '') return raw.trim();
  throw new Error(`expected a non-empty string, got ${describe(raw)}`);
}

/** Parses a list given as a YAML sequence of strings or a comma-separated string. */
export function parseList(raw: unknown): string[] {
  const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : null;
  if (items === null) throw new Error(`expected a list or a comma-separated string, got ${describe(raw)}`);
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new Error(`expected a list of strings, got ${describe(raw)}`);
    const trimmed = item.trim();
    if (trimmed !== '') out.push(trimmed);
  }
  return out;
}

/**
 * Parses a log level directive list: a default level and/or `target=level` pairs separated by
 * commas, e.g. `info,engine=debug`. Returns the normalised text (lower case, no spaces).
 */
export function parseLogLevel(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new Error(`expected a log level such as info or info,engine=debug, got ${describe(raw)}`);
  }
  const directives = raw.split(',').map((part) => part.trim().toLowerCase());
  for (const directive of directives) {
    const equals = directive.indexOf('=');
    const target = equals < 0 ? null : directive.slice(0, equals);
    const level = equals < 0 ? directive : directive.slice(equals + 1);
    if (target !== null && !/^[a-z0-9_.-]+$/.test(target)) {
      throw new Error(`invalid log target "${target}" in ${describe(raw)}`);
    }
    if (!LOG_LEVELS.includes(level)) {
      throw new Error(`unknown log level "${level}" in ${describe(raw)}, expected one of ${LOG_LEVELS.join(', ')}`);
    }
  }
  return directives.join(',');
}

/** Parses a raw value into the given setting type. */
export function parseSettingValue<T extends SettingType>(
  type: T,
  raw: unknown,
  bounds: SettingBounds = {},
): SettingTypeValue[T] {
  const parsers: { [K in SettingType]: (value: unknown) => SettingTypeValue[K] } = {
    string: parseString,
    integer: (value) => parseInteger(value, bounds),
    boolean: parseBoolean,
    bytes: (value) => parseBytes(value, bounds),
    list: parseList,
    log_level: parseLogLevel,
  };
  return parsers[type](raw);
}
