/**
 * `index.visibility` and `index.refresh_interval` as a shard copy applies them: a collection's
 * catalog settings mapped onto the engine's `visibility` and `refreshIntervalMs`
 * (src/engine/shard/refreshed-view.ts). `immediate` (the default) makes every acknowledged write
 * visible to the next search; `refresh` shows searches the copy's last refreshed view, refreshed
 * every `refresh_interval` (`-1`: only on request).
 */
import type { EngineSettings } from '../engine/shard/settings.ts';
import type { Visibility } from '../engine/shard/refreshed-view.ts';

/** The values `index.visibility` takes, the default first. */
export const VISIBILITIES: readonly Visibility[] = ['immediate', 'refresh'];

/** What a collection's settings say about visibility (catalog names). */
export interface VisibilitySettings {
  visibility?: string;
  refresh_interval?: string;
}

const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1, micros: 0.001, nanos: 0.000_001 };

/** A checked time value (`1s`, `500ms`, `-1`, `0`) in ms; -1 and 0 stay as they are (no periodic refresh). */
export function timeValueMs(rendered: string): number {
  if (rendered === '-1' || rendered === '0') return Number(rendered);
  const match = /^(\d+)(d|h|m|s|ms|micros|nanos)$/.exec(rendered);
  if (!match) return NaN;
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  // A positive interval below a millisecond refreshes as often as a timer can.
  return ms > 0 ? Math.max(1, ms) : 0;
}

/** Whether a collection with these settings makes writes visible on refresh only. */
export function refreshesOnly(settings: VisibilitySettings): boolean {
  return settings.visibility === 'refresh';
}

/** The engine settings a collection's visibility settings set on each of its shard copies. */
export function engineVisibilityOf(settings: VisibilitySettings): Pick<EngineSettings, 'visibility' | 'refreshIntervalMs'> {
  const interval = settings.refresh_interval === undefined ? undefined : timeValueMs(settings.refresh_interval);
  return {
    visibility: refreshesOnly(settings) ? 'refresh' : 'immediate',
    refreshIntervalMs: interval === undefined || Number.isNaN(interval) ? undefined : interval,
  };
}
