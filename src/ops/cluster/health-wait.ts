/**
 * The waits of `GET /_cluster/health` (Elasticsearch's `wait_for_status`, `wait_for_nodes`,
 * `wait_for_active_shards`, `wait_for_no_initializing_shards`, `wait_for_no_relocating_shards`,
 * bounded by `timeout`): the health is evaluated again (catalog, local copy states, the other
 * nodes' copy states) every `HEALTH_RECHECK_MS` until every condition holds or the timeout
 * passes; then the last evaluation is answered, with `timed_out: true` if it came from the
 * timeout (the route answers 408 then, as Elasticsearch does).
 */
import type { ClusterHealth, HealthStatus } from './cluster-health.ts';

/** What a health request waits for; absent fields are not waited for. */
export interface HealthWait {
  status?: HealthStatus;
  /** `number_of_nodes` compared with `count` (ES `N`, `>=N`, `<=N`, `>N`, `<N`, `ge(N)`, ...). */
  nodes?: { comparison: 'eq' | 'ge' | 'le' | 'gt' | 'lt'; count: number };
  /** Active shard copies at least this many; `all`: every copy (primaries and replicas) active. */
  activeShards?: number | 'all';
  noInitializingShards?: boolean;
  noRelocatingShards?: boolean;
  /** Longest wait, ms (ES default 30 s). */
  timeoutMs: number;
}

/** A health answer, flagged when its wait ran out. */
export type WaitedHealth = ClusterHealth | (Omit<ClusterHealth, 'timed_out'> & { timed_out: true });

/** How often a waiting health request evaluates the health again. */
export const HEALTH_RECHECK_MS = 100;

/** Default of `timeout` for a health request that waits (Elasticsearch's 30 s). */
export const DEFAULT_HEALTH_TIMEOUT_MS = 30_000;

const STATUS_RANK: Record<HealthStatus, number> = { red: 0, yellow: 1, green: 2 };

/** Parses ES `wait_for_nodes` (`3`, `>=3`, `le(3)`, ...); null when it is not one of those forms. */
export function parseNodesCondition(value: string): HealthWait['nodes'] | null {
  const text = value.trim();
  const symbolic = /^(>=|<=|>|<)?\s*(\d+)$/.exec(text);
  if (symbolic) {
    const comparison = ({ '>=': 'ge', '<=': 'le', '>': 'gt', '<': 'lt' } as const)[symbolic[1] as '>=' | '<=' | '>' | '<'] ?? 'eq';
    return { comparison, count: Number(symbolic[2]) };
  }
  const named = /^(ge|le|gt|lt)\((\d+)\)$/.exec(text);
  return named ? { comparison: named[1] as 'ge' | 'le' | 'gt' | 'lt', count: Number(named[2]) } : null;
}

/** Whether `health` meets every condition of `wait`. */
export function healthMeets(health: ClusterHealth, wait: HealthWait): boolean {
  if (wait.status !== undefined && STATUS_RANK[health.status] < STATUS_RANK[wait.status]) return false;
  if (wait.nodes !== undefined) {
    const nodes = health.number_of_nodes;
    const { count } = wait.nodes;
    const holds = { eq: nodes === count, ge: nodes >= count, le: nodes <= count, gt: nodes > count, lt: nodes < count }[wait.nodes.comparison];
    if (!holds) return false;
  }
  if (wait.activeShards !== undefined) {
    const copies = health.active_shards + health.initializing_shards + health.unassigned_shards + health.relocating_shards;
    if (health.active_shards < (wait.activeShards === 'all' ? copies : wait.activeShards)) return false;
  }
  if (wait.noInitializingShards === true && health.initializing_shards > 0) return false;
  if (wait.noRelocatingShards === true && health.relocating_shards > 0) return false;
  return true;
}

/** Whether `wait` has a condition at all (a health request without one answers at once). */
export function waitsForSomething(wait: HealthWait): boolean {
  return wait.status !== undefined || wait.nodes !== undefined || wait.activeShards !== undefined || wait.noInitializingShards === true || wait.noRelocatingShards === true;
}

/** Evaluates the health until `wait` is met or its timeout passes (see the module comment). */
export async function waitForHealth(evaluate: () => Promise<ClusterHealth>, wait: HealthWait): Promise<WaitedHealth> {
  const deadline = performance.now() + wait.timeoutMs;
  for (;;) {
    const health = await evaluate();
    if (!waitsForSomething(wait) || healthMeets(health, wait)) return health;
    const left = deadline - performance.now();
    if (left <= 0) return { ...health, timed_out: true };
    await new Promise((resolve) => setTimeout(resolve, Math.min(HEALTH_RECHECK_MS, left)));
  }
}
