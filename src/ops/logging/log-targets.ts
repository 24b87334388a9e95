/**
 * Named log targets on one pino root logger. Every module logs through the logger of its target
 * (`http`, `catalog`, `engine`, `slowlog`, ...): a child of the root bound to `{component: name}`
 * (so every line names its target) whose level comes from the `log.level` directives. Loggers derived from a target logger with
 * `child()` inherit its level through pino's prototype chain, so changing a target's level
 * reaches every logger already made from it (per-shard and per-request loggers included) without
 * tracking them. Applying new directives never recreates a logger, so nothing in flight is lost.
 */
import type { Logger } from 'pino';
import { FALLBACK_LEVEL, levelForTarget, parseDirectives, pinoLevel, type LogDirectives } from './log-directives.ts';

/** See the module comment. */
export class LogTargets {
  private readonly loggers = new Map<string, Logger>();
  private directives: LogDirectives;

  /**
   * `directives` is the start-up `log.level`. The root keeps the level it was created with until
   * directives are applied, so an embedding caller's choice (a silent logger in tests) stands.
   */
  constructor(
    readonly root: Logger,
    directives: string,
  ) {
    this.directives = parseDirectives(directives);
    this.directives.defaultLevel = root.level === 'silent' ? 'off' : root.level;
  }

  /** The logger of a target (created on first use, then shared). */
  target(name: string): Logger {
    let logger = this.loggers.get(name);
    if (logger === undefined) {
      logger = this.root.child({ component: name });
      logger.level = pinoLevel(levelForTarget(this.directives, name));
      this.loggers.set(name, logger);
    }
    return logger;
  }

  /** Sets the levels of the root and of every target to what a complete directive list says. */
  apply(directives: string): void {
    this.directives = parseDirectives(directives);
    this.root.level = pinoLevel(this.directives.defaultLevel ?? FALLBACK_LEVEL);
    for (const [name, logger] of this.loggers) logger.level = pinoLevel(levelForTarget(this.directives, name));
  }

  /** The level each target created so far logs at, by name (for diagnostics and tests). */
  levels(): Record<string, string> {
    const levels: Record<string, string> = {};
    for (const [name, logger] of this.loggers) levels[name] = logger.level;
    return levels;
  }
}
