/**
 * Search lanes: every search runs in a lane (the `lane` query parameter, `default` when absent)
 * that admits `search.lanes.<lane>.max_concurrent` searches at a time and lets
 * `search.lanes.<lane>.max_queue` more wait, first come first served; a search finding both full
 * is refused with `lane_full` (HTTP 429) before any work is done. A lane exists when any of its
 * keys is set (the `default` lane always exists); budgets follow settings changes at once:
 * running and queued searches are never dropped, a raised budget starts waiting searches
 * immediately, a lowered one takes effect as running searches finish.
 *
 * Searches interleave on the event loop (the node layer yields between shards), which is what the
 * concurrency budget bounds. Every lane counts its searches; the counters always add up:
 * `submitted = rejected + completed + failed + active + queued`.
 */
import { settingDefault } from '../../config/settings.ts';
import type { SettingsChange } from '../settings/dynamic-settings.ts';
import { LaneError } from './lane-error.ts';
import type { SlowLog } from './slow-log.ts';

/** The lane of searches that do not name one. */
export const DEFAULT_LANE = 'default';

/** The settings keys of a lane's budget. */
export function laneKeys(lane: string): { maxConcurrent: string; maxQueue: string } {
  return { maxConcurrent: `search.lanes.${lane}.max_concurrent`, maxQueue: `search.lanes.${lane}.max_queue` };
}

/** Counters and budget of one lane, as node stats show them. */
export interface LaneStats {
  max_concurrent: number;
  max_queue: number;
  /** Searches running now. */
  active: number;
  /** Searches waiting for a slot now. */
  queued: number;
  /** Searches that asked for this lane. */
  submitted: number;
  /** Searches refused because the lane was full (HTTP 429). */
  rejected: number;
  /** Searches that returned a response (timed out ones included). */
  completed: number;
  /** Searches that ended with an error. */
  failed: number;
  /** Completed searches that hit their timeout and returned partial results. */
  timed_out: number;
  /** Searches at or over the slow-log threshold. */
  slow: number;
  /** Total execution time of finished searches. */
  time_in_millis: number;
  /** Total time searches waited in the queue. */
  queue_time_in_millis: number;
}

/** What the lanes need to know of a search response. */
export interface LaneSearchResult {
  took: number;
  timed_out: boolean;
}

/** The request a lane runs, for the slow log. */
export interface LaneSearchRequest {
  /** The `lane` parameter; undefined means the default lane. */
  lane: string | undefined;
  /** Search target (collection, comma list, wildcard, `_all`). */
  target: string;
  body: unknown;
}

interface Lane {
  name: string;
  /** False once no setting defines the lane; it finishes what it holds and refuses new searches. */
  defined: boolean;
  maxConcurrent: number;
  maxQueue: number;
  waiting: Array<() => void>;
  stats: LaneStats;
}

/** The setting values lanes read (a subset of the node's values). */
type LaneSettingValues = Readonly<Record<string, unknown>>;

/** See the module comment. */
export class SearchLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    values: LaneSettingValues,
    private readonly slowLog: SlowLog,
  ) {
    this.configure(values);
  }

  /** Settings listener: applies new lane budgets (subscribe it to `search.lanes.` changes). */
  readonly onSettingsChange = (change: SettingsChange): void => {
    this.configure(change.values);
  };

  /**
   * Runs a search in its lane: waits for a slot (or is refused), runs `task`, counts the outcome
   * and reports slow searches. Errors of the task pass through after being counted.
   */
  async run<T extends LaneSearchResult>(request: LaneSearchRequest, task: () => Promise<T>): Promise<T> {
    const { lane, queued } = this.admit(request.lane ?? DEFAULT_LANE);
    const { stats } = lane;
    const queuedAt = performance.now();
    if (queued) await new Promise<void>((resolve) => lane.waiting.push(resolve));
    else stats.active++;
    const startedAt = performance.now();
    const queueMs = startedAt - queuedAt;
    stats.queue_time_in_millis += queueMs;
    try {
      const result = await task();
      stats.completed++;
      if (result.timed_out) stats.timed_out++;
      const slow = this.slowLog.observe({
        lane: lane.name,
        collection: request.target,
        body: request.body,
        took: result.took,
        queueMs: Math.round(queueMs),
        timedOut: result.timed_out,
      });
      if (slow) stats.slow++;
      return result;
    } catch (error) {
      stats.failed++;
      throw error;
    } finally {
      stats.time_in_millis += performance.now() - startedAt;
      stats.active--;
      this.startWaiting(lane);
    }
  }

  /** Budget and counters of every lane that is defined or still busy, by name. */
  stats(): Record<string, LaneStats> {
    const out: Record<string, LaneStats> = {};
    for (const lane of [...this.lanes.values()].sort((left, right) => (left.name < right.name ? -1 : 1))) {
      if (!lane.defined && lane.stats.active === 0 && lane.stats.queued === 0) continue;
      out[lane.name] = {
        ...lane.stats,
        max_concurrent: lane.maxConcurrent,
        max_queue: lane.maxQueue,
        time_in_millis: Math.round(lane.stats.time_in_millis),
        queue_time_in_millis: Math.round(lane.stats.queue_time_in_millis),
      };
    }
    return out;
  }

  /** Counts the search in and tells whether it must queue (counted as queued) or may start now. */
  private admit(name: string): { lane: Lane; queued: boolean } {
    const lane = this.lanes.get(name);
    if (lane === undefined || !lane.defined) {
      const known = [...this.lanes.values()].filter((candidate) => candidate.defined).map((candidate) => candidate.name);
      throw new LaneError('unknown_lane', `unknown search lane [${name}]; defined lanes: [${known.join(', ')}]`);
    }
    const { stats } = lane;
    stats.submitted++;
    if (stats.active >= lane.maxConcurrent) {
      if (lane.waiting.length >= lane.maxQueue) {
        stats.rejected++;
        throw new LaneError(
          'lane_full',
          `search lane [${name}] is full: ${stats.active} searches running (max_concurrent ${lane.maxConcurrent}) and ${lane.waiting.length} waiting (max_queue ${lane.maxQueue}); retry later or raise the lane budget`,
        );
      }
      stats.queued++;
      return { lane, queued: true };
    }
    return { lane, queued: false };
  }

  /** Hands free slots to waiting searches, oldest first. */
  private startWaiting(lane: Lane): void {
    while (lane.stats.active < lane.maxConcurrent && lane.waiting.length > 0) {
      lane.stats.active++;
      lane.stats.queued--;
      lane.waiting.shift()!();
    }
  }

  /** Creates, updates and retires lanes to match the settings. */
  private configure(values: LaneSettingValues): void {
    const defined = new Set<string>([DEFAULT_LANE]);
    for (const key of Object.keys(values)) {
      const match = /^search\.lanes\.([^.]+)\.max_concurrent$/.exec(key);
      if (match) defined.add(match[1]);
    }
    for (const lane of this.lanes.values()) lane.defined = defined.has(lane.name);
    for (const name of defined) {
      const keys = laneKeys(name);
      const maxConcurrent = Number(values[keys.maxConcurrent] ?? settingDefault(keys.maxConcurrent));
      const maxQueue = Number(values[keys.maxQueue] ?? settingDefault(keys.maxQueue));
      let lane = this.lanes.get(name);
      if (lane === undefined) {
        lane = { name, defined: true, maxConcurrent, maxQueue, waiting: [], stats: emptyStats() };
        this.lanes.set(name, lane);
      }
      lane.maxConcurrent = maxConcurrent;
      lane.maxQueue = maxQueue;
      this.startWaiting(lane);
    }
  }
}

function emptyStats(): LaneStats {
  return {
    max_concurrent: 0,
    max_queue: 0,
    active: 0,
    queued: 0,
    submitted: 0,
    rejected: 0,
    completed: 0,
    failed: 0,
    timed_out: 0,
    slow: 0,
    time_in_millis: 0,
    queue_time_in_millis: 0,
  };
}
