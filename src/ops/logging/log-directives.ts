/**
 * `log.level` directive lists: a default level and `target=level` pairs separated by commas,
 * e.g. `warn,engine=debug,http=trace`. A change merges into the current list: a bare level
 * replaces only the default, a `target=level` directive replaces only that target's level, and
 * every other directive stays. Targets are dotted names; `engine.merge` follows `engine` unless it
 * has a directive of its own. `off` is accepted next to pino's `silent`.
 */
import { parseLogLevel } from '../../config/setting-types.ts';

/** A parsed directive list. */
export interface LogDirectives {
  /** The untargeted level, or null when the list has none. */
  defaultLevel: string | null;
  /** Target name → level, in the order they were given. */
  targets: Map<string, string>;
}

/** Level used when a directive list names no default level. */
export const FALLBACK_LEVEL = 'info';

/** Parses (and validates, through the settings table's parser) a directive list. */
export function parseDirectives(text: string): LogDirectives {
  const directives: LogDirectives = { defaultLevel: null, targets: new Map() };
  for (const directive of parseLogLevel(text).split(',')) {
    const equals = directive.indexOf('=');
    if (equals < 0) directives.defaultLevel = directive;
    else directives.targets.set(directive.slice(0, equals), directive.slice(equals + 1));
  }
  return directives;
}

/** Renders directives back to the normalised text form (default first, then targets). */
export function formatDirectives(directives: LogDirectives): string {
  const parts: string[] = [];
  if (directives.defaultLevel !== null) parts.push(directives.defaultLevel);
  for (const [target, level] of directives.targets) parts.push(`${target}=${level}`);
  return parts.join(',');
}

/**
 * The directive list after applying `change` to `current`: a bare level in `change` replaces the
 * default, each target directive replaces that target; everything else in `current` stays.
 */
export function mergeDirectives(current: string, change: string): string {
  const merged = parseDirectives(current);
  const update = parseDirectives(change);
  if (update.defaultLevel !== null) merged.defaultLevel = update.defaultLevel;
  for (const [target, level] of update.targets) {
    merged.targets.delete(target);
    merged.targets.set(target, level);
  }
  return formatDirectives(merged);
}

/** The level a target logs at: its own directive, else its nearest dotted parent's, else the default. */
export function levelForTarget(directives: LogDirectives, target: string): string {
  let name = target;
  for (;;) {
    const level = directives.targets.get(name);
    if (level !== undefined) return level;
    const dot = name.lastIndexOf('.');
    if (dot < 0) return directives.defaultLevel ?? FALLBACK_LEVEL;
    name = name.slice(0, dot);
  }
}

/** The pino level name for a directive level (`off` → `silent`). */
export function pinoLevel(level: string): string {
  return level === 'off' ? 'silent' : level;
}
