/**
 * Start-up configuration of a node: defaults, overridden by the YAML file (`--config`), then by
 * `TROVE_*` environment variables, then by command-line flags. Every key is checked against the
 * settings table; an unknown key or an invalid value stops the start with a message naming it.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseSettingValue, type SettingValue } from './setting-types.ts';
import {
  SETTINGS,
  closestSettingKey,
  defaultValue,
  envNameFor,
  findSetting,
  type FixedSettingValues,
  type SettingKey,
} from './settings.ts';

/** Where an effective value came from. Runtime overrides add their own source later. */
export type SettingSource = 'default' | 'file' | 'env' | 'flag';

/** Every fixed key with its typed value, plus any patterned keys (search lanes) some source set. */
export type NodeSettingValues = FixedSettingValues & Record<string, SettingValue>;

/** The effective start-up configuration of a node. */
export interface NodeConfig {
  /** Effective value of each key; `path.data` is absolute. */
  readonly values: Readonly<NodeSettingValues>;
  /** Source of each key present in `values`. */
  readonly sources: Readonly<Record<string, SettingSource>>;
  /** Absolute path of the YAML file that was read, or null. */
  readonly configPath: string | null;
}

/** Inputs of `loadConfig`. */
export interface LoadConfigOptions {
  /** YAML file with flat dotted keys (nested mappings are flattened too). */
  configPath?: string;
  /** Environment to read `TROVE_*` overrides from (usually `process.env`). */
  env?: Record<string, string | undefined>;
  /** Setting key → raw value from the command line, see `parseSettingFlags`. */
  flags?: Record<string, string>;
  /** Directory relative paths are resolved against (default: the process working directory). */
  cwd?: string;
}

/** A configuration problem that prevents the node from starting. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Values of `log.format`: pretty on a terminal and JSON otherwise, always JSON, always pretty. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

/** A `log.format` value. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** String settings whose value must be one of a fixed set (checked after every source is applied). */
const SETTING_CHOICES: Readonly<Record<string, readonly string[]>> = {
  'log.format': LOG_FORMATS,
};

/** Short flags accepted next to the dotted `--http.port 9300` form. */
export const FLAG_ALIASES: Readonly<Record<string, string>> = {
  port: 'http.port',
  host: 'http.host',
  data: 'path.data',
  name: 'node.name',
  'log-level': 'log.level',
};

function unknownKeyError(key: string, where: string): ConfigError {
  const hint = closestSettingKey(key);
  return new ConfigError(`unknown setting [${key}] in ${where}${hint ? ` (did you mean [${hint}]?)` : ''}`);
}

/**
 * Turns command-line arguments such as `--http.port 9300`, `--port=9300` or `--merge.enabled`
 * (a bare flag means `true`) into setting key → raw value. Aliases are resolved; keys are not
 * validated here (loadConfig does that).
 */
export function parseSettingFlags(args: readonly string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (!arg.startsWith('--') || arg.length === 2) {
      throw new ConfigError(`unexpected argument [${arg}], expected --setting.key value`);
    }
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals < 0 ? undefined : equals);
    let raw: string;
    if (equals >= 0) raw = arg.slice(equals + 1);
    else if (index + 1 < args.length && !args[index + 1].startsWith('--')) raw = args[++index];
    else raw = 'true';
    flags[FLAG_ALIASES[name] ?? name] = raw;
  }
  return flags;
}

function flattenYaml(node: unknown, prefix: string, out: Map<string, unknown>, file: string): void {
  for (const [name, value] of Object.entries(node as Record<string, unknown>)) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      flattenYaml(value, key, out, file);
      continue;
    }
    if (out.has(key)) throw new ConfigError(`setting [${key}] is set twice in ${file}`);
    out.set(key, value);
  }
}

function readConfigFile(path: string): Map<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    // The YAML parser's message ends with a multi-line excerpt of the file: keep its first line.
    const reason = (error as Error).message.split('\n')[0]!.replace(/:$/, '');
    throw new ConfigError(`config file ${path} is not valid YAML: ${reason}`);
  }
  const entries = new Map<string, unknown>();
  if (document === null || document === undefined) return entries;
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError(`config file ${path} must be a mapping of setting keys to values`);
  }
  flattenYaml(document, '', entries, path);
  return entries;
}

/** Builds the effective configuration; throws ConfigError naming the offending key. */
export function loadConfig(options: LoadConfigOptions = {}): NodeConfig {
  const cwd = options.cwd ?? process.cwd();
  const values: Record<string, SettingValue> = {};
  const sources: Record<string, SettingSource> = {};
  for (const key of Object.keys(SETTINGS) as SettingKey[]) {
    values[key] = defaultValue(key);
    sources[key] = 'default';
  }

  const apply = (key: string, raw: unknown, source: SettingSource, where: string): void => {
    const setting = findSetting(key);
    if (setting === null) throw unknownKeyError(key, where);
    try {
      values[key] = parseSettingValue(setting.type, raw, setting);
    } catch (error) {
      throw new ConfigError(`invalid value for setting [${key}] in ${where}: ${(error as Error).message}`);
    }
    const choices = SETTING_CHOICES[key];
    if (choices !== undefined && !choices.includes(values[key] as string)) {
      throw new ConfigError(`invalid value for setting [${key}] in ${where}: expected one of ${choices.join(', ')}, got "${String(values[key])}"`);
    }
    sources[key] = source;
  };

  const configPath = options.configPath ? resolve(cwd, options.configPath) : null;
  if (configPath !== null) {
    for (const [key, raw] of readConfigFile(configPath)) apply(key, raw, 'file', `config file ${configPath}`);
  }
  const env = options.env ?? {};
  for (const key of Object.keys(SETTINGS)) {
    const raw = env[envNameFor(key)];
    if (raw !== undefined && raw !== '') apply(key, raw, 'env', `environment variable ${envNameFor(key)}`);
  }
  for (const [key, raw] of Object.entries(options.flags ?? {})) apply(key, raw, 'flag', `flag --${key}`);

  const dataPath = values['path.data'] as string;
  if (!isAbsolute(dataPath)) values['path.data'] = resolve(cwd, dataPath);
  return { values: values as NodeSettingValues, sources, configPath };
}
